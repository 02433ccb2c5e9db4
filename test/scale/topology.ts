/**
 * The service scaled out on real parts, for test/scale/scaled-out.test.ts: three API processes and two worker
 * processes (the built service, `dist/src/main.js` and `dist/src/worker.js`) behind HAProxy, with PgBouncer in
 * transaction mode between them and the run's PostgreSQL; each process's event bus LISTENs on a connection straight
 * to PostgreSQL (DATABASE_LISTEN_URL). docs/scaling.md draws it.
 *
 * Every process gets a PgBouncer database name of its own (`api1`..`api3`, `worker1`, `worker2`), all naming the
 * same PostgreSQL database: PgBouncer's SHOW STATS then counts each process's transactions and statements.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { composition } from '../../src/modules';
import { createUser } from '../../src/modules/users/create-user';
import { openOrm, type Orm } from '../../src/platform/db/orm';
import { appPort, createTestDatabase } from '../helpers/app';
import { MAIN, startServiceProcess, WORKER, type ServiceProcess } from '../helpers/process';
import { until } from '../helpers/until';

export const API_COUNT = 3;
export const WORKER_COUNT = 2;
/** The ORM's pool of each process (DB_POOL_MAX) and pg-boss's (bootstrap.ts: `max: 4`). */
const DB_POOL_MAX = 5;
const PG_BOSS_MAX = 4;
/** PgBouncer's server connections per process: at least everything that process's pools may hold at once. */
const POOL_SIZE_PER_PROCESS = DB_POOL_MAX + PG_BOSS_MAX + 1;

/** An executable on PATH or in the sbin directories (Debian puts haproxy and pgbouncer in /usr/sbin). */
export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  return dirs.map((dir) => path.join(dir, name)).find((candidate) => candidate && existsSync(candidate));
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux unless built otherwise). */
const CLOCK_TICKS = 100;

export interface Proc {
  name: string;
  kind: 'api' | 'worker';
  service: ServiceProcess;
  /** The PgBouncer database this process connects to. */
  alias: string;
  port?: number;
}

export interface PoolStats {
  xacts: number;
  queries: number;
}

/** A foreground helper (haproxy, pgbouncer) with its output kept for error messages. */
interface Helper {
  child: ChildProcess;
  output: string[];
  exited: Promise<void>;
}

function startHelper(command: string, args: string[], lines = 400): Helper {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (output.length > lines) output.splice(0, output.length - lines);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (error) => {
      output.push(`spawn error: ${error.message}`);
      resolve();
    });
  });
  return { child, output, exited };
}

/** SIGTERM (or `signal`), then SIGKILL if it is still there after `graceMs`; resolves once it has exited. */
async function stopChild(child: ChildProcess, exited: Promise<unknown>, signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000) {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export class Topology {
  /** The HAProxy front: what every client of the test talks to. */
  url = '';
  /** The test's own database, straight to PostgreSQL (not through PgBouncer). */
  directUrl = '';
  /** An ORM over the direct URL: migrated once before any process starts; the test's reads and its set-up. */
  orm?: Orm;
  dataDir = '';
  storageDir = '';
  readonly apis: Proc[] = [];
  readonly workers: Proc[] = [];
  private root = '';
  private bouncerPort = 0;
  private statsPort = 0;
  private bouncer?: Helper;
  private haproxy?: Helper;
  private dropDatabase?: () => Promise<void>;
  private readonly killOnExit = () => {
    for (const child of this.children()) child.kill('SIGKILL');
  };

  constructor(
    private readonly binaries: { haproxy: string; pgbouncer: string },
    /** Configuration every process gets (the same for all, as a deployment gives them). */
    private readonly env: Record<string, string>,
  ) {}

  get processes(): Proc[] {
    return [...this.apis, ...this.workers];
  }

  private children(): ChildProcess[] {
    return [this.haproxy?.child, ...this.processes.map((proc) => proc.service.child), this.bouncer?.child].filter(
      (child): child is ChildProcess => child !== undefined,
    );
  }

  async start(): Promise<void> {
    process.once('exit', this.killOnExit);
    const database = await createTestDatabase();
    this.directUrl = database.url;
    this.dropDatabase = database.drop;
    // The migrations, once, straight to PostgreSQL, before any process starts (each process's own migrate then
    // finds nothing to do).
    this.orm = await openOrm(this.directUrl, { entities: composition.entities, poolMax: 4 });
    // A sandbox API process makes a development user when the database has none: three starting at once on an empty
    // database race for it, and the losers exit (docs/scaling.md, "Starting"). The database has a user already.
    await createUser(this.orm.em.fork(), { email: `operator-${randomBytes(4).toString('hex')}@example.com` });

    // PgBouncer runs as postgres when the test runs as root, and must read its files: 755 and 644.
    this.root = await mkdtemp(path.join(os.tmpdir(), 'esign-scale-'));
    await chmod(this.root, 0o755);
    this.dataDir = path.join(this.root, 'data');
    this.storageDir = path.join(this.dataDir, 'blobs');
    await mkdir(this.storageDir, { recursive: true });

    await this.startPgBouncer();
    const front = await appPort();
    this.url = `http://127.0.0.1:${front}`;
    const env = { ...this.sharedEnv(), ...this.env };
    // The first worker starts alone: it installs pg-boss's schema and creates every queue. Processes creating queues
    // at the same time on a fresh database can deadlock in pg-boss's create_queue (each attaches a partition to
    // pgboss.job), and the loser exits (docs/scaling.md, "Starting").
    const startWorker = (n: number) => {
      const alias = `worker${n}`;
      const proc: Proc = {
        name: alias,
        kind: 'worker',
        alias,
        service: startServiceProcess({ ...env, ...this.databaseEnv(alias) }, WORKER),
      };
      this.workers.push(proc);
      return proc.service.waitForLine(/"msg":"worker running"/, 180_000);
    };
    await startWorker(1);
    for (let n = 1; n <= API_COUNT; n++) {
      const port = await appPort();
      const alias = `api${n}`;
      this.apis.push({
        name: alias,
        kind: 'api',
        alias,
        port,
        service: startServiceProcess({ ...env, ...this.databaseEnv(alias), PORT: String(port), RUN_WORKERS: 'false' }, MAIN),
      });
    }
    await Promise.all([
      ...this.apis.map((proc) => proc.service.waitForLine(/"msg":"listening"/, 180_000)),
      ...Array.from({ length: WORKER_COUNT - 1 }, (_, i) => startWorker(i + 2)),
    ]);
    await this.startHaproxy(front);
  }

  /** What a deployment gives every process alike: one public address, the same secrets, one blob store. */
  private sharedEnv(): Record<string, string> {
    return {
      APP_ENV: 'sandbox',
      HOST: '127.0.0.1',
      PUBLIC_URL: this.url,
      URL_SIGNING_SECRET: `scale-url-${randomBytes(12).toString('hex')}`,
      SECRETS_ENCRYPTION_KEY: `scale-key-${randomBytes(12).toString('hex')}`,
      DATA_DIR: this.dataDir,
      STORAGE_DIR: this.storageDir,
      DB_POOL_MAX: String(DB_POOL_MAX),
      // HAProxy adds X-Forwarded-For; the client's address is the one in it.
      TRUST_PROXY: 'loopback',
      LOG_LEVEL: 'info',
    };
  }

  /** A PgBouncer database (transaction mode): `api1`..`api3`, `worker1`, `worker2`, or `pgbouncer`, its console. */
  bouncerUrl(alias: string): string {
    return `postgresql://${new URL(this.directUrl).username}@127.0.0.1:${this.bouncerPort}/${alias}`;
  }

  /** The pool through PgBouncer (transaction mode); the LISTEN connection straight to PostgreSQL. */
  private databaseEnv(alias: string): Record<string, string> {
    return { DATABASE_URL: this.bouncerUrl(alias), DATABASE_LISTEN_URL: this.directUrl };
  }

  private async startPgBouncer(): Promise<void> {
    const direct = new URL(this.directUrl);
    const user = decodeURIComponent(direct.username);
    const password = decodeURIComponent(direct.password);
    const dbname = direct.pathname.slice(1);
    this.bouncerPort = await appPort();
    const dir = path.join(this.root, 'pgbouncer');
    await mkdir(dir, { mode: 0o755 });
    await chmod(dir, 0o755);
    const aliases = [
      ...Array.from({ length: API_COUNT }, (_, i) => `api${i + 1}`),
      ...Array.from({ length: WORKER_COUNT }, (_, i) => `worker${i + 1}`),
    ];
    const target = `host=${direct.hostname} port=${direct.port || 5432} dbname=${dbname} user=${user}${password ? ` password=${password}` : ''}`;
    const ini = [
      '[databases]',
      ...aliases.map((alias) => `${alias} = ${target} pool_size=${POOL_SIZE_PER_PROCESS}`),
      '',
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${this.bouncerPort}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${POOL_SIZE_PER_PROCESS}`,
      'max_client_conn = 500',
      `admin_users = ${user}`,
      `stats_users = ${user}`,
      'logfile =',
      'pidfile =',
      '',
    ].join('\n');
    const iniFile = path.join(dir, 'pgbouncer.ini');
    await writeFile(iniFile, ini, { mode: 0o644 });
    // `trust` still needs the user in the auth file.
    await writeFile(path.join(dir, 'userlist.txt'), `"${user}" ""\n`, { mode: 0o644 });
    const asRoot = process.getuid?.() === 0;
    this.bouncer = startHelper(this.binaries.pgbouncer, [...(asRoot ? ['-u', 'postgres'] : []), iniFile]);
    await until(async () => (await this.poolStats().catch(() => undefined)) !== undefined, 'PgBouncer to accept connections', {
      timeoutMs: 20_000,
      pollMs: 100,
    }).catch((error: Error) => {
      throw new Error(`${error.message}; its output:\n${this.bouncer!.output.join('\n')}`);
    });
  }

  private async startHaproxy(front: number): Promise<void> {
    this.statsPort = await appPort();
    const cfg = [
      'global',
      '  log stdout format raw local0 info',
      'defaults',
      '  mode http',
      '  log global',
      // One line per request, with its termination state (the test prints the abnormal ones when it fails).
      '  option httplog',
      '  timeout connect 5s',
      '  timeout client 60s',
      '  timeout server 120s',
      // graphql-ws sockets: idle longer than the client timeout between keep-alive pings (12 s).
      '  timeout tunnel 1h',
      // A request whose connection to a server failed goes to another server (connection failures only).
      '  retries 2',
      '  option redispatch 1',
      '  option forwardfor',
      'frontend front',
      `  bind 127.0.0.1:${front}`,
      '  default_backend api',
      'backend api',
      '  balance roundrobin',
      '  option httpchk',
      '  http-check send meth GET uri /healthz',
      '  http-check expect status 200',
      '  default-server inter 1s fall 2 rise 2',
      // Which process answered: the test checks the spread, and which process raised what.
      '  http-response set-header X-Served-By %[srv_name]',
      ...this.apis.map((proc) => `  server ${proc.name} 127.0.0.1:${proc.port} check`),
      'listen stats',
      `  bind 127.0.0.1:${this.statsPort}`,
      '  stats enable',
      '  stats uri /stats',
      '',
    ].join('\n');
    const cfgFile = path.join(this.root, 'haproxy.cfg');
    await writeFile(cfgFile, cfg, { mode: 0o644 });
    this.haproxy = startHelper(this.binaries.haproxy, ['-db', '-f', cfgFile], 50_000);
    await until(
      async () => {
        const servers = await this.haproxyServers().catch(() => []);
        return servers.length === API_COUNT && servers.every((server) => server.status === 'UP');
      },
      'HAProxy to find every API process up',
      { timeoutMs: 30_000, pollMs: 100 },
    ).catch((error: Error) => {
      throw new Error(`${error.message}; its output:\n${this.haproxy!.output.join('\n')}`);
    });
  }

  /** The API servers as HAProxy's stats page lists them (name, status, sessions now and in all). */
  async haproxyServers(): Promise<{ name: string; status: string; scur: number; stot: number }[]> {
    const response = await fetch(`http://127.0.0.1:${this.statsPort}/stats;csv`);
    const [header, ...rows] = (await response.text()).split('\n').filter(Boolean);
    const columns = header!.replace(/^# /, '').split(',');
    const at = (row: string[], name: string) => row[columns.indexOf(name)]!;
    return rows
      .map((line) => line.split(','))
      .filter((row) => at(row, 'pxname') === 'api' && !['FRONTEND', 'BACKEND'].includes(at(row, 'svname')))
      .map((row) => ({
        name: at(row, 'svname'),
        status: at(row, 'status'),
        scur: Number(at(row, 'scur')),
        stot: Number(at(row, 'stot')),
      }));
  }

  /** PgBouncer's SHOW STATS: transactions and statements each process's pool has run so far, by alias. */
  async poolStats(): Promise<Map<string, PoolStats>> {
    const admin = new pg.Client({ connectionString: this.bouncerUrl('pgbouncer') });
    await admin.connect();
    try {
      const { rows } = await admin.query('SHOW STATS');
      return new Map(
        rows.map((row: Record<string, string>) => [
          row.database!,
          { xacts: Number(row.total_xact_count), queries: Number(row.total_query_count) },
        ]),
      );
    } finally {
      await admin.end();
    }
  }

  /**
   * PgBouncer's SHOW POOLS by alias: the client connections each process holds open, the server connections PgBouncer
   * has open for them now, and how long a client has waited for one (SHOW STATS: total_wait_time, in ms, since start).
   */
  async poolShape(): Promise<Map<string, { clients: number; servers: number; waitedMs: number }>> {
    const admin = new pg.Client({ connectionString: this.bouncerUrl('pgbouncer') });
    await admin.connect();
    try {
      const pools = (await admin.query('SHOW POOLS')).rows as Record<string, string>[];
      const stats = (await admin.query('SHOW STATS')).rows as Record<string, string>[];
      const n = (row: Record<string, string>, ...keys: string[]) => keys.reduce((sum, key) => sum + Number(row[key] ?? 0), 0);
      return new Map(
        pools.map((row) => [
          row.database!,
          {
            clients: n(row, 'cl_active', 'cl_waiting'),
            servers: n(row, 'sv_active', 'sv_idle', 'sv_used', 'sv_tested', 'sv_login'),
            waitedMs: Number(stats.find((stat) => stat.database === row.database)?.total_wait_time ?? 0) / 1000,
          },
        ]),
      );
    } finally {
      await admin.end();
    }
  }

  /** CPU time (user + system, every thread) each process has used so far, in ms. */
  cpuMs(proc: Proc): number {
    const fields = readFileSync(`/proc/${proc.service.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // After the command: state is field 3, utime 14 and stime 15 (1-based, as proc(5) counts them).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  }

  /** Bytes and files in the shared blob store. */
  async blobUsage(): Promise<{ bytes: number; files: number }> {
    let bytes = 0;
    let files = 0;
    const walk = async (dir: string) => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) await walk(full);
        else if (entry.isFile()) {
          bytes += (await stat(full)).size;
          files++;
        }
      }
    };
    await walk(this.storageDir);
    return { bytes, files };
  }

  /** Which process wrote a log line matching `pattern` (each process's stdout is its own). */
  logLines(proc: Proc, pattern: RegExp): string[] {
    return [...proc.service.stdout, ...proc.service.stderr].filter((line) => pattern.test(line));
  }

  /** Everything stopped and removed, whatever got started; safe to call after a failed start. */
  async stop(): Promise<void> {
    if (this.haproxy) await stopChild(this.haproxy.child, this.haproxy.exited);
    await Promise.all(this.processes.map((proc) => stopChild(proc.service.child, proc.service.exited)));
    if (this.bouncer) await stopChild(this.bouncer.child, this.bouncer.exited);
    process.removeListener('exit', this.killOnExit);
    await this.orm?.close().catch(() => undefined);
    await this.dropDatabase?.().catch(() => undefined);
    if (this.root) await rm(this.root, { recursive: true, force: true });
  }

  /**
   * HAProxy's log lines of requests that did not end normally (termination state other than `----`), leaving out
   * WebSocket tunnels (closed by either side) and its own stats page: what to look at when a client saw a connection
   * closed.
   */
  haproxyAbnormal(): string[] {
    return (this.haproxy?.output ?? []).filter((line) => {
      const state = / ([A-Za-z-]{4}) \d+\/\d+\/\d+\/\d+\/\d+ /.exec(line)?.[1];
      return state !== undefined && state !== '----' && !/ 101 /.test(line) && !line.includes(' stats stats/<STATS> ');
    });
  }

  /** What went wrong, for a failure message: the last lines of every process and helper. */
  diagnostics(): string {
    const tail = (lines: string[]) => lines.slice(-15).join('\n');
    return [
      ...this.processes.map((proc) => `--- ${proc.name}\n${tail([...proc.service.stdout, ...proc.service.stderr])}`),
      `--- pgbouncer\n${tail(this.bouncer?.output ?? [])}`,
      `--- haproxy\n${tail(this.haproxy?.output ?? [])}`,
    ].join('\n');
  }
}
