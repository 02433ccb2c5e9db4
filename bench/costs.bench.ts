/**
 * Benchmark: what each main operation costs, for the capacity model in docs/scaling.md. The service runs as production
 * deploys it, in processes of its own: one API process (`main.js`, RUN_WORKERS=false) and one worker (`worker.js`),
 * each logging in to PostgreSQL as a role of its own, so that pg_stat_statements tells their statements apart. Each
 * operation is run COUNT times, one at a time, and its costs are the differences over that window, per operation:
 *
 * - CPU: user + system time of each process from /proc/<pid>/stat (every thread, the worker pool included: what
 *   process.cpuUsage() answers inside it), the API's split into its event loop (thread `MainThread`) and its worker
 *   pool (`WorkerThread`); PostgreSQL's, the postmaster and all its processes, exited ones included (their time is
 *   added to the postmaster's children's time when it reaps them);
 * - statements: pg_stat_statements' calls of the two roles (BEGIN and COMMIT are statements too; the
 *   transactions are the COMMITs), except pg-boss's polls: a fetch counts only when it returned a job;
 * - WAL: pg_stat_statements' wal_bytes of those statements;
 * - TSA and OCSP round trips: requests at the bench's own TSA and responder;
 * - idle subtracted: each process's CPU, and the statements other than fetches, at the rate of an idle window
 *   measured first, times the window's length.
 *
 * The work an operation leaves to the queue (invitations, webhook deliveries, a bulk's rows, procurement) is in its
 * window: a window ends when no job is due or running. Bytes stored, before and after: the live rows of every table
 * (pg_column_size), every table's pg_total_relation_size (pages, indexes, TOAST), and the blob store's files.
 * Without DATABASE_URL the suite starts an embedded cluster of its own with pg_stat_statements loaded; with it, that
 * server must have pg_stat_statements in shared_preload_libraries and let the bench create roles, or the statements
 * are not reported.
 */
import { chmod, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { composition } from '../src/modules';
import { createUser } from '../src/modules/users/create-user';
import { creditWallet } from '../src/modules/wallet/credit-wallet';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/platform/db/embedded-postgres';
import { openOrm } from '../src/platform/db/orm';
import { SecretBox } from '../src/platform/crypto/secret-box';
import { newId } from '../src/platform/ids';
import { benchServiceEnv, type BenchDatabase } from './harness';
import { fivePagePdf } from './bulk.bench';
import type { BenchRow } from './measure';
import { sized } from './mode';
import { sessionRequest } from './session-setup';
import { documentOf } from './signing.bench';
import { spawnService, waitFor, type ServiceProcess } from './service-process';
import { benchSigningPeers } from './signing-peers';

const DOCUMENTS = sized(16, 2);
/** Sessions over a scanned contract of LARGE_MB (incompressible images, as the signing suite's). */
const LARGE_DOCUMENTS = sized(6, 1);
const LARGE_MB = sized(1, 0.25);
const READS = sized(300, 10);
const STAMPS = sized(200, 10);
const BULK_ROWS = sized(100, 4);
const DELIVERIES = sized(50, 3);
const IDLE_MS = sized(10_000, 2_000);
const API_ROLE = 'costs_api';
const WORKER_ROLE = 'costs_worker';
const ROLE_PASSWORD = 'costs';
const CLOCK_TICKS_PER_SECOND = 100;
/** How long a window waits for the queue to have nothing due or running. */
const QUIET_LIMIT_MS = 120_000;

/** The run's database, with what the suite can learn of it. */
interface Cluster {
  /** A superuser's connection to the suite's database: the bench's own reads (not counted). */
  adminUrl: string;
  /** The two processes' connections: their roles, or adminUrl where roles could not be made. */
  apiUrl: string;
  workerUrl: string;
  /** Whether pg_stat_statements answers (and the roles exist). */
  statements: boolean;
  /** The postmaster, when the cluster is the suite's own (its CPU is then measured). */
  postmasterPid?: number;
  close(): Promise<void>;
}

async function execute(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const asRole = (url: string, role: string) => {
  const parsed = new URL(url);
  parsed.username = role;
  parsed.password = ROLE_PASSWORD;
  return parsed.toString();
};

/** Two login roles (superusers, as the service's own user is here) and pg_stat_statements in the database. */
async function prepareRoles(url: string): Promise<boolean> {
  try {
    for (const role of [API_ROLE, WORKER_ROLE])
      await execute(
        url,
        `do $$ begin create role ${role} login superuser password '${ROLE_PASSWORD}'; exception when duplicate_object then null; end $$`,
      );
    await execute(url, 'create extension if not exists pg_stat_statements');
    await execute(url, 'select count(*) from pg_stat_statements');
    return true;
  } catch (error) {
    process.stderr.write(`costs: statements not measured (${(error as Error).message})\n`);
    return false;
  }
}

/** Without DATABASE_URL: a cluster of the suite's own, restarted once with pg_stat_statements preloaded. */
async function openCluster(shared: BenchDatabase): Promise<Cluster> {
  if (process.env.DATABASE_URL) {
    const url = await shared.create();
    const statements = await prepareRoles(url);
    const [apiUrl, workerUrl] = statements ? [asRole(url, API_ROLE), asRole(url, WORKER_ROLE)] : [url, url];
    return { adminUrl: url, apiUrl, workerUrl, statements, close: async () => undefined };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'esign-bench-costs-pg-'));
  await chmod(dir, 0o755);
  const dataDir = path.join(dir, 'pg');
  let cluster: EmbeddedDatabase = await startEmbeddedPostgres(dataDir);
  await execute(cluster.adminUrl, `alter system set shared_preload_libraries = 'pg_stat_statements'`);
  await execute(cluster.adminUrl, `alter system set pg_stat_statements.max = 10000`);
  await cluster.stop();
  cluster = await startEmbeddedPostgres(dataDir);
  await execute(cluster.adminUrl, 'create database costs');
  const url = new URL(cluster.adminUrl);
  url.pathname = '/costs';
  const adminUrl = url.toString();
  const statements = await prepareRoles(adminUrl);
  const postmasterPid = Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  return {
    adminUrl,
    apiUrl: statements ? asRole(adminUrl, API_ROLE) : adminUrl,
    workerUrl: statements ? asRole(adminUrl, WORKER_ROLE) : adminUrl,
    statements,
    postmasterPid,
    close: async () => {
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** /proc/<pid>/stat fields after the command name: [11] utime, [12] stime, [13] cutime, [14] cstime, in ticks. */
function statFields(file: string): number[] | undefined {
  try {
    const text = readFileSync(file, 'utf8');
    return text
      .slice(text.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
  } catch {
    return undefined;
  }
}

const ticksToMs = (ticks: number) => (ticks * 1000) / CLOCK_TICKS_PER_SECOND;

/** A process's CPU in ms: all of it, and its event loop's and worker pool threads' shares. */
function processCpu(pid: number): { total: number; loop: number; pool: number } {
  const own = statFields(`/proc/${pid}/stat`);
  if (!own) throw new Error(`process ${pid} is gone`);
  let loop = 0;
  let pool = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const fields = statFields(`/proc/${pid}/task/${task}/stat`);
    if (!fields) continue;
    let name = '';
    try {
      name = readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (name === 'MainThread') loop += fields[11] + fields[12];
    if (name === 'WorkerThread') pool += fields[11] + fields[12];
  }
  return { total: ticksToMs(own[11] + own[12]), loop: ticksToMs(loop), pool: ticksToMs(pool) };
}

/** The cluster's CPU in ms: the postmaster, its reaped children, and its live ones. */
function clusterCpu(postmasterPid: number): number {
  const own = statFields(`/proc/${postmasterPid}/stat`);
  if (!own) throw new Error('the PostgreSQL postmaster is gone');
  let ticks = own[11] + own[12] + own[13] + own[14];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(`/proc/${entry}/stat`);
    // [1] is the parent's pid.
    if (fields && fields[1] === postmasterPid) ticks += fields[11] + fields[12];
  }
  return ticksToMs(ticks);
}

/** pg-boss's fetch of the next job: one call a polling interval per worker slot, most of them empty. */
const isFetch = (query: string) => /FOR UPDATE SKIP LOCKED/i.test(query) && /UPDATE \S+\.job j SET/i.test(query);

interface StatementTotals {
  /** Statements other than fetches, fetches that returned a job, every fetch, COMMITs, WAL bytes: per role. */
  [role: string]: { other: number; fetched: number; fetches: number; commits: number; walBytes: number };
}

interface Snapshot {
  at: number;
  api: ReturnType<typeof processCpu>;
  worker: number;
  postgres?: number;
  statements?: StatementTotals;
  tsa: number;
  ocsp: number;
}

/** What the suite reads before and after each window. */
interface Meter {
  snapshot(): Promise<Snapshot>;
  admin: pg.Client;
}

function meterOf(cluster: Cluster, admin: pg.Client, api: ServiceProcess, worker: ServiceProcess, peers: PeerCounts): Meter {
  return {
    admin,
    snapshot: async () => {
      let statements: StatementTotals | undefined;
      if (cluster.statements) {
        const { rows } = await admin.query<{ role: string; query: string; calls: string; rows: string; wal: string }>(
          `select r.rolname as role, s.query, s.calls, s.rows, s.wal_bytes as wal
             from pg_stat_statements s join pg_roles r on r.oid = s.userid
            where s.toplevel and r.rolname in ($1, $2) and s.dbid = (select oid from pg_database where datname = current_database())`,
          [API_ROLE, WORKER_ROLE],
        );
        statements = {};
        for (const role of [API_ROLE, WORKER_ROLE])
          statements[role] = { other: 0, fetched: 0, fetches: 0, commits: 0, walBytes: 0 };
        for (const row of rows) {
          const into = statements[row.role]!;
          if (isFetch(row.query)) {
            into.fetched += Number(row.rows);
            into.fetches += Number(row.calls);
          } else into.other += Number(row.calls);
          if (/^\s*commit\b/i.test(row.query)) into.commits += Number(row.calls);
          into.walBytes += Number(row.wal);
        }
      }
      return {
        at: performance.now(),
        api: processCpu(api.pid),
        worker: processCpu(worker.pid).total,
        postgres: cluster.postmasterPid ? clusterCpu(cluster.postmasterPid) : undefined,
        statements,
        tsa: peers.tsa,
        ocsp: peers.ocsp,
      };
    },
  };
}

/** A window's costs per operation. */
interface Cost {
  count: number;
  /** Wall time per operation, one at a time. */
  wallMs: number;
  api: number;
  apiLoop: number;
  apiPool: number;
  worker: number;
  postgres?: number;
  statements?: { api: number; worker: number; commits: number; walBytes: number };
  tsa: number;
  ocsp: number;
}

interface IdleRates {
  /** Per millisecond. */
  api: number;
  apiLoop: number;
  apiPool: number;
  worker: number;
  postgres: number;
  statements: { api: number; worker: number; commits: number; walBytes: number };
  /** pg-boss's empty polls of the worker, per millisecond. */
  workerPolls: number;
}

function difference(before: Snapshot, after: Snapshot) {
  const ms = after.at - before.at;
  const roleDelta = (role: string) => {
    const a = after.statements?.[role];
    const b = before.statements?.[role];
    if (!a || !b) return undefined;
    return {
      other: a.other - b.other,
      fetched: a.fetched - b.fetched,
      fetches: a.fetches - b.fetches,
      commits: a.commits - b.commits,
      wal: a.walBytes - b.walBytes,
    };
  };
  return {
    ms,
    api: after.api.total - before.api.total,
    apiLoop: after.api.loop - before.api.loop,
    apiPool: after.api.pool - before.api.pool,
    worker: after.worker - before.worker,
    postgres: after.postgres !== undefined && before.postgres !== undefined ? after.postgres - before.postgres : undefined,
    apiStatements: roleDelta(API_ROLE),
    workerStatements: roleDelta(WORKER_ROLE),
    tsa: after.tsa - before.tsa,
    ocsp: after.ocsp - before.ocsp,
  };
}

async function idleRates(meter: Meter): Promise<IdleRates> {
  await quiet(meter.admin);
  const before = await meter.snapshot();
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const d = difference(before, await meter.snapshot());
  return {
    api: d.api / d.ms,
    apiLoop: d.apiLoop / d.ms,
    apiPool: d.apiPool / d.ms,
    worker: d.worker / d.ms,
    postgres: (d.postgres ?? 0) / d.ms,
    statements: {
      api: (d.apiStatements?.other ?? 0) / d.ms,
      worker: (d.workerStatements?.other ?? 0) / d.ms,
      commits: ((d.apiStatements?.commits ?? 0) + (d.workerStatements?.commits ?? 0)) / d.ms,
      walBytes: ((d.apiStatements?.wal ?? 0) + (d.workerStatements?.wal ?? 0)) / d.ms,
    },
    workerPolls: (d.workerStatements?.fetches ?? 0) / d.ms,
  };
}

/** Waits until no pg-boss job is due (or due within 3 s) or running. */
async function quiet(admin: pg.Client): Promise<void> {
  const deadline = Date.now() + QUIET_LIMIT_MS;
  for (;;) {
    const { rows } = await admin.query<{ n: number }>(
      `select count(*)::int as n from pgboss.job
        where state = 'active' or (state in ('created', 'retry') and start_after < now() + interval '3 seconds')`,
    );
    if (rows[0]!.n === 0) return;
    if (Date.now() > deadline) throw new Error(`the queue still had ${rows[0]!.n} jobs due after ${QUIET_LIMIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Runs `operation` `count` times, one after the other (`done` then waits for what it left behind), and answers the
 * window's costs per operation, idle subtracted.
 */
async function measure(
  meter: Meter,
  idle: IdleRates,
  count: number,
  operation: (index: number) => Promise<void>,
  done: () => Promise<void> = async () => undefined,
): Promise<Cost> {
  await quiet(meter.admin);
  const before = await meter.snapshot();
  for (let index = 0; index < count; index++) await operation(index);
  const operationsMs = performance.now() - before.at;
  await done();
  await quiet(meter.admin);
  // The rate limiter's flush (every 200 ms) of the last requests.
  await new Promise((resolve) => setTimeout(resolve, 400));
  const d = difference(before, await meter.snapshot());
  const per = (value: number) => value / count;
  const net = (value: number, rate: number) => per(Math.max(0, value - rate * d.ms));
  return {
    count,
    wallMs: operationsMs / count,
    api: net(d.api, idle.api),
    apiLoop: net(d.apiLoop, idle.apiLoop),
    apiPool: net(d.apiPool, idle.apiPool),
    worker: net(d.worker, idle.worker),
    postgres: d.postgres === undefined ? undefined : net(d.postgres, idle.postgres),
    statements:
      d.apiStatements && d.workerStatements
        ? {
            api: per(d.apiStatements.fetched) + net(d.apiStatements.other, idle.statements.api),
            worker: per(d.workerStatements.fetched) + net(d.workerStatements.other, idle.statements.worker),
            commits: net(d.apiStatements.commits + d.workerStatements.commits, idle.statements.commits),
            walBytes: net(d.apiStatements.wal + d.workerStatements.wal, idle.statements.walBytes),
          }
        : undefined,
    tsa: per(d.tsa),
    ocsp: per(d.ocsp),
  };
}

interface PeerCounts {
  url: string;
  tsa: number;
  ocsp: number;
  close(): Promise<unknown>;
}

/** The bench's TSA and OCSP responder (as the other signing suites use), counting what they are asked. */
async function countingPeers(): Promise<PeerCounts> {
  const peers = await benchSigningPeers();
  const counts: PeerCounts = { url: peers.url, tsa: 0, ocsp: 0, close: peers.close };
  peers.server.prependListener('request', (req: http.IncomingMessage) => {
    if (req.url === '/tsa') counts.tsa++;
    else counts.ocsp++;
  });
  return counts;
}

/** A receiver that answers 200 at once and keeps the event id of each request. */
async function webhookReceiver() {
  const events: string[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      events.push(String(req.headers['esign-event-id'] ?? ''));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    events,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

type Call = <T = any>(method: string, route: string, body?: unknown, token?: string) => Promise<T>;

function callerOf(url: string, token: string): Call {
  return async (method, route, body, as = token) => {
    const response = await fetch(`${url}${route}`, {
      method,
      headers: { authorization: `Bearer ${as}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const answer = (await response.json()) as { data?: unknown; errors?: unknown[] };
    if (!response.ok || answer.errors?.length)
      throw new Error(`${method} ${route} answered ${response.status}: ${JSON.stringify(answer).slice(0, 500)}`);
    return ((answer.data as object | undefined) ?? answer) as never;
  };
}

async function uploadPdf(url: string, token: string, pdf: Uint8Array): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'contract.pdf');
  const response = await fetch(`${url}/api/v1/files/upload-pdf`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const body = (await response.json()) as { data?: { client_id?: string } };
  if (!response.ok || !body.data?.client_id) throw new Error(`upload-pdf answered ${response.status}: ${JSON.stringify(body)}`);
  return body.data.client_id;
}

/** Every table's total size (indexes and TOAST included), by schema-qualified name. */
async function tableBytes(admin: pg.Client): Promise<Map<string, number>> {
  const { rows } = await admin.query<{ name: string; bytes: string }>(
    `select n.nspname || '.' || c.relname as name, pg_total_relation_size(c.oid) as bytes
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p') and n.nspname in ('public', 'pgboss')`,
  );
  return new Map(rows.map((row) => [row.name, Number(row.bytes)]));
}

/** The bytes of the live rows of every table of the service's own (pg_column_size of each row, as stored). */
async function rowBytes(admin: pg.Client): Promise<Map<string, number>> {
  const { rows: tables } = await admin.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind = 'r' and n.nspname = 'public'`,
  );
  if (tables.length === 0) return new Map();
  const { rows } = await admin.query<{ name: string; bytes: string }>(
    tables
      .map(({ name }) => `select '${name}' as name, coalesce(sum(pg_column_size(t.*)), 0) as bytes from public."${name}" t`)
      .join(' union all '),
  );
  return new Map(rows.map((row) => [row.name, Number(row.bytes)]));
}

async function directoryBytes(dir: string): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const inner = await directoryBytes(full);
      bytes += inner.bytes;
      files += inner.files;
    } else {
      bytes += (await stat(full)).size;
      files++;
    }
  }
  return { bytes, files };
}

async function healthy(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/healthz`)).ok;
  } catch {
    return false;
  }
}

/** A user and an access token, made by the bench (its statements are not the service's), with money when asked. */
async function newUser(adminUrl: string, walletRupees = 0): Promise<{ userId: string; token: string }> {
  const orm = await openOrm(adminUrl, { entities: composition.entities, poolMax: 1 });
  try {
    const created = await createUser(orm.em.fork(), { email: `costs-${Math.random().toString(36).slice(2)}@example.com` });
    if (walletRupees > 0) await creditWallet(orm.em.fork(), created.user_id, BigInt(walletRupees) * 100n);
    return { userId: created.user_id, token: created.token };
  } finally {
    await orm.close();
  }
}

/** Polls `check` every 100 ms until it holds. */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`costs: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A cost scaled to another unit (a stamp of an order, a row of a bulk). */
function per(cost: Cost, units: number): Cost {
  const scale = (value: number) => value / units;
  return {
    ...cost,
    count: cost.count * units,
    wallMs: scale(cost.wallMs),
    api: scale(cost.api),
    apiLoop: scale(cost.apiLoop),
    apiPool: scale(cost.apiPool),
    worker: scale(cost.worker),
    postgres: cost.postgres === undefined ? undefined : scale(cost.postgres),
    statements: cost.statements && {
      api: scale(cost.statements.api),
      worker: scale(cost.statements.worker),
      commits: scale(cost.statements.commits),
      walBytes: scale(cost.statements.walBytes),
    },
    tsa: scale(cost.tsa),
    ocsp: scale(cost.ocsp),
  };
}

const ms = (value: number) => (value >= 10 ? value.toFixed(0) : value.toFixed(1));
const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

function costRow(label: string, cost: Cost): BenchRow {
  const cpu =
    `CPU: API ${ms(cost.api)} ms (event loop ${ms(cost.apiLoop)}, pool ${ms(cost.apiPool)}), worker ${ms(cost.worker)} ms` +
    (cost.postgres === undefined ? '' : `, PostgreSQL ${ms(cost.postgres)} ms`);
  const sql = cost.statements
    ? `; ${(cost.statements.api + cost.statements.worker).toFixed(1)} statements (API ${cost.statements.api.toFixed(1)}, ` +
      `worker ${cost.statements.worker.toFixed(1)}), ${cost.statements.commits.toFixed(1)} explicit transactions, WAL ${kB(cost.statements.walBytes)}`
    : '; statements not measured';
  const peers = cost.tsa + cost.ocsp > 0 ? `; TSA ${cost.tsa.toFixed(1)}, OCSP ${cost.ocsp.toFixed(1)} round trips` : '';
  const total = cost.api + cost.worker + (cost.postgres ?? 0);
  return {
    name: `costs: ${label} (mean of ${cost.count})`,
    figure: `${cpu}${sql}${peers}`,
    baseline: `${ms(cost.wallMs)} ms wall each, one at a time`,
    ratio: total / cost.wallMs,
    floor: 'reported',
  };
}

interface Stored {
  tables: Map<string, number>;
  rows: Map<string, number>;
  blobs: { bytes: number; files: number };
}

async function storedNow(admin: pg.Client, blobDir: string): Promise<Stored> {
  return { tables: await tableBytes(admin), rows: await rowBytes(admin), blobs: await directoryBytes(blobDir) };
}

/**
 * What `count` operations added, per operation: the live rows of the service's tables (their bytes as stored) and how
 * much those tables grew on disk (pages, indexes and TOAST), pg-boss's tables apart, and the blob store's files.
 */
function storedRow(
  label: string,
  before: Stored,
  after: Stored,
  count: number,
  baseline: { text: string; bytes: number },
): BenchRow {
  const grown = (of: (stored: Stored) => Map<string, number>) =>
    [...of(after)]
      .map(([name, bytes]) => ({ name: name.replace(/^public\./, ''), bytes: (bytes - (of(before).get(name) ?? 0)) / count }))
      .filter((table) => table.bytes > 0)
      .sort((a, b) => b.bytes - a.bytes);
  const sum = (tables: { bytes: number }[]) => tables.reduce((total, table) => total + table.bytes, 0);
  const rows = grown((stored) => stored.rows);
  const relations = grown((stored) => stored.tables);
  const own = relations.filter((table) => !table.name.startsWith('pgboss.'));
  const queue = relations.filter((table) => table.name.startsWith('pgboss.'));
  const blobs = (after.blobs.bytes - before.blobs.bytes) / count;
  const files = (after.blobs.files - before.blobs.files) / count;
  return {
    name: `costs: bytes stored per ${label} (mean of ${count})`,
    figure:
      `blobs ${kB(blobs)} in ${files.toFixed(1)} files; rows ${kB(sum(rows))} ` +
      `(${rows
        .slice(0, 7)
        .map((table) => `${table.name} ${kB(table.bytes)}`)
        .join(
          ', ',
        )}); the tables grew ${kB(sum(own))} on disk with their indexes; pg-boss's ${kB(sum(queue))} until its jobs are deleted`,
    baseline: baseline.text,
    ratio: baseline.bytes ? (blobs + sum(own)) / baseline.bytes : NaN,
    floor: 'reported',
  };
}

/** The session details over GraphQL: the fields a dashboard reads. */
const DETAILS_QUERY = `query Details($id: String!) {
  esignSession(client_id: $id) {
    client_id status sign_type created_at expires_at file_id current_pdf_file_id signer_idx
    signers { signer_id full_name email status sign_type eligible elements { field_id type page x y width height value } }
  }
}`;

interface Service {
  url: string;
  blobDir: string;
  secretsEncryptionKey: string;
  api: ServiceProcess;
  worker: ServiceProcess;
}

/** The API process (migrating the database), then the worker, on the cluster's two roles. */
async function startService(cluster: Cluster, peers: PeerCounts): Promise<Service & { remove(): Promise<void> }> {
  const prepared = await benchServiceEnv(cluster.apiUrl, {
    RUN_WORKERS: 'false',
    TSA_URL: `${peers.url}/tsa`,
    PADES_LTV: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    BULK_INVITES_PER_SECOND: '1000',
    // Production's default (the other suites poll every 0.5 s): the idle polling subtracted is production's.
    QUEUE_POLL_INTERVAL_SECONDS: '1',
    STAMP_VENDOR_LATENCY_MS: '0',
    STAMP_VENDOR_REJECTION_RATE: '0',
  });
  const url = `http://127.0.0.1:${prepared.port}`;
  const api = spawnService('main.js', prepared.env);
  try {
    await waitFor(api, 'the API process answering /healthz', () => healthy(url), 90_000);
  } catch (error) {
    await api.stop();
    await prepared.remove();
    throw error;
  }
  const worker = spawnService('worker.js', { ...prepared.env, DATABASE_URL: cluster.workerUrl });
  return {
    url,
    blobDir: path.join(prepared.dataDir, 'blobs'),
    secretsEncryptionKey: prepared.env.SECRETS_ENCRYPTION_KEY!,
    api,
    worker,
    remove: async () => {
      await worker.stop();
      await api.stop();
      await prepared.remove();
    },
  };
}

interface Session {
  client_id: string;
  signers: { token: string }[];
}

/** Two suresign signers, each invited in turn and sent the completed document (by email: to the outbox here). */
function withMessages(fileId: string) {
  const request = sessionRequest(fileId, 2);
  return {
    ...request,
    signers: request.signers.map((signer) => ({ ...signer, notification: { invite: true, completion: true } })),
  };
}

/** The operations the suite measures, over one service and its users. */
function operationsOf(service: Service, admin: pg.Client, owner: { token: string }, receiver: { events: string[] }) {
  const call = callerOf(service.url, owner.token);
  return {
    call,
    initialize: (fileId: string, token = owner.token) =>
      call<Session>('POST', '/api/v1/esign/initialize-esign', withMessages(fileId), token),
    sign: (signerToken: string) => call('POST', '/signer-api/sign', { consent: true }, signerToken),
    details: (clientId: string) => call('GET', `/api/v1/esign/details?client_id=${encodeURIComponent(clientId)}`),
    graphql: (clientId: string) => call('POST', '/graphql', { query: DETAILS_QUERY, variables: { id: clientId } }),
    /** An order of `quantity` stamps from the simulated vendor, procured by the worker. */
    procure: async (quantity: number) => {
      const order = await call<{ client_id: string }>('POST', '/api/v1/stamps/create-order', {
        state_code: 'MH',
        article_id: 'MH-5',
        first_party_name: 'Costs First Party',
        second_party_name: 'Costs Second Party',
        stamp_duty_amount: 100,
        consideration_amount: 1000,
        quantity,
      });
      await until(async () => {
        const { rows } = await admin.query<{ available: number; rejected: number }>(
          `select count(*) filter (where status = 'available')::int as available,
                  count(*) filter (where status = 'rejected')::int as rejected
             from stamp_instances where order_id = $1`,
          [order.client_id],
        );
        if (rows[0]!.rejected > 0) throw new Error('costs: the simulated vendor rejected a stamp');
        return rows[0]!.available === quantity;
      }, `the ${quantity} stamps of order ${order.client_id}`);
    },
    /** A JSON bulk of `rows` rows from a two-signer template, until every row is a session. */
    bulk: async (templateId: string, rows: number, key: string) => {
      const bulk = await call<{ client_id: string }>('POST', '/api/v1/esign/bulk-send', {
        template_id: templateId,
        sign_type: 'suresign',
        rows: Array.from({ length: rows }, (_, index) => ({
          key: `${key}-${index}`,
          signers: [
            { full_name: `Borrower ${index}`, email: `borrower${index}@example.com` },
            { full_name: 'Lender Bank', email: 'loans@example.com' },
          ],
        })),
      });
      await until(async () => {
        const { rows: found } = await admin.query<{ status: string; failed: number }>(
          `select b.status, (select count(*)::int from bulk_rows where bulk_id = b.id and status = 'failed') as failed
             from bulks b where b.id = $1`,
          [bulk.client_id],
        );
        if (found[0]?.failed) throw new Error('costs: a bulk row failed');
        return found[0]?.status === 'completed';
      }, `bulk ${bulk.client_id}`);
    },
    /** Waits until the receiver has heard `count` requests in all. */
    delivered: (count: number) => until(async () => receiver.events.length >= count, `${count} webhook deliveries`),
  };
}

async function templateOf(call: Call, fileId: string): Promise<string> {
  const box = (page: number) => ({ type: 'signature', page, x: 72, y: 700, width: 160, height: 50, alignment: 'left' });
  const saved = await call<{ client_id: string }>('POST', '/api/v1/templates/save', {
    name: 'Costs loan agreement',
    file_id: fileId,
    signers: [
      { reason: 'Borrower', elements: [box(4)] },
      { reason: 'Lender', elements: [box(4)] },
    ],
  });
  return saved.client_id;
}

interface Context {
  service: Service;
  admin: pg.Client;
  meter: Meter;
  idle: IdleRates;
  ops: ReturnType<typeof operationsOf>;
  owner: { token: string };
}

/** Measures `operation` and what it stored, per operation. */
async function measureStored(context: Context, count: number, operation: (index: number) => Promise<void>) {
  const before = await storedNow(context.admin, context.service.blobDir);
  const cost = await measure(context.meter, context.idle, count, operation);
  return { cost, before, after: await storedNow(context.admin, context.service.blobDir) };
}

/** Uploads of `pdf`, then `count` sessions over it taken to completion, each step a window of its own. */
async function documentRows(context: Context, pdf: Uint8Array, count: number, what: string): Promise<BenchRow[]> {
  const { ops, owner, service, admin } = context;
  const uploads = await measureStored(context, count, async () => void (await uploadPdf(service.url, owner.token, pdf)));
  const fileId = await uploadPdf(service.url, owner.token, pdf);
  const before = await storedNow(admin, service.blobDir);
  const sessions: Session[] = [];
  const initialize = await measure(
    context.meter,
    context.idle,
    count,
    async () => void sessions.push(await ops.initialize(fileId)),
  );
  const sign = (signer: number) => async (i: number) => void (await ops.sign(sessions[i]!.signers[signer]!.token));
  const first = await measure(context.meter, context.idle, count, sign(0));
  const last = await measure(context.meter, context.idle, count, sign(1));
  const after = await storedNow(admin, service.blobDir);
  const upload = { text: `the upload: ${kB(pdf.byteLength)}`, bytes: pdf.byteLength };
  return [
    costRow(`upload-pdf, ${what}`, uploads.cost),
    storedRow(`upload, ${what}`, uploads.before, uploads.after, count, upload),
    costRow(`initialize-esign, suresign, 2 signers, ${what} (the first invitation, delivered to the outbox)`, initialize),
    costRow(`the first signature of two, ${what} (the document prepared, CMS, a TSA token, the next invitation)`, first),
    costRow(
      `the last signature, completing to B-LTA, ${what} (/DSS, document time-stamps, certificate, completion messages)`,
      last,
    ),
    storedRow(`completed document, 2 signers, ${what}`, before, after, count, {
      ...upload,
      text: `${upload.text} (not counted)`,
    }),
  ];
}

/** The session details read both ways, a stamp order, a bulk, and webhook deliveries. */
async function otherRows(context: Context, readId: string, templateId: string, hooks: Hooks): Promise<BenchRow[]> {
  const { ops, meter, idle, admin } = context;
  const rest = await measure(meter, idle, READS, async () => void (await ops.details(readId)));
  const graphql = await measure(meter, idle, READS, async () => void (await ops.graphql(readId)));
  const procured = await measureStored(context, 1, () => ops.procure(STAMPS));
  const bulk = await measureStored(context, 1, () => ops.bulk(templateId, BULK_ROWS, 'measured'));

  // Webhooks: the deliveries of events recorded first (sessions of a user with an endpoint), sent again.
  for (let i = 0; i < DELIVERIES; i++) await ops.initialize(hooks.fileId, hooks.token);
  await ops.delivered(hooks.heardBefore + DELIVERIES);
  await quiet(admin);
  const events = [...new Set(hooks.receiver.events)].slice(-DELIVERIES);
  const heard = hooks.receiver.events.length;
  const webhooks = await measure(
    meter,
    idle,
    DELIVERIES,
    async (i) => void (await ops.call('POST', '/api/v1/webhooks/redeliver', { event_id: events[i] }, hooks.token)),
    () => ops.delivered(heard + DELIVERIES),
  );
  const none = { text: 'reported', bytes: 0 };
  return [
    costRow('GET esign/details of a completed session', rest),
    costRow('GraphQL esignSession details of a completed session', graphql),
    costRow(`stamp procurement, per stamp of a ${STAMPS}-stamp order (simulated vendor, no latency)`, per(procured.cost, STAMPS)),
    storedRow('stamp procured', procured.before, procured.after, STAMPS, none),
    costRow(`bulk send, per row of a ${BULK_ROWS}-row JSON bulk (2 signers, no invitations asked)`, per(bulk.cost, BULK_ROWS)),
    storedRow('bulk row', bulk.before, bulk.after, BULK_ROWS, none),
    costRow('a webhook delivery: the worker; the API column is the POST webhooks/redeliver that queued it again', webhooks),
  ];
}

interface Hooks {
  token: string;
  fileId: string;
  receiver: { events: string[] };
  heardBefore: number;
}

/** A user whose endpoint (every event) is the receiver: production takes https only, so its row is written directly. */
async function hooksUser(cluster: Cluster, context: { service: Service; admin: pg.Client }, receiver: { url: string }) {
  const hooks = await newUser(cluster.adminUrl);
  const box = new SecretBox(context.service.secretsEncryptionKey, 'webhook-signing-secret');
  await context.admin.query(
    `insert into webhook_endpoints (id, user_id, url, events, secret_sealed) values ($1, $2, $3, '["*"]', $4)`,
    [newId('whk'), hooks.userId, receiver.url, box.seal('whsec_costs')],
  );
  return hooks;
}

/** Every path once or more before anything is measured (its code compiled, the pool's thread started). */
async function warmUp(
  ops: ReturnType<typeof operationsOf>,
  files: { owner: string; hooks: string },
  templateId: string,
  hooksToken: string,
) {
  const warm = await ops.initialize(files.owner);
  await ops.sign(warm.signers[0]!.token);
  await ops.sign(warm.signers[1]!.token);
  for (let i = 0; i < 20; i++) await ops.details(warm.client_id);
  for (let i = 0; i < 20; i++) await ops.graphql(warm.client_id);
  await ops.procure(5);
  await ops.bulk(templateId, 2, 'warm');
  await ops.initialize(files.hooks, hooksToken);
  await ops.delivered(1);
  return warm.client_id;
}

/**
 * Benchmark: the cost of each main operation (CPU, statements, WAL, round trips) and the bytes a completed document
 * stores, for docs/scaling.md's capacity model. Reported, no floors: they are what the model's arithmetic starts from.
 */
export async function costBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const cluster = await openCluster(database);
  const peers = await countingPeers();
  const receiver = await webhookReceiver();
  const admin = new pg.Client({ connectionString: cluster.adminUrl });
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    service = await startService(cluster, peers);
    await admin.connect();
    const owner = await newUser(cluster.adminUrl, (STAMPS + 20) * 110);
    const hooks = await hooksUser(cluster, { service, admin }, receiver);
    const ops = operationsOf(service, admin, owner, receiver);
    const pdf = await fivePagePdf();
    const fileId = await uploadPdf(service.url, owner.token, pdf);
    const templateId = await templateOf(ops.call, fileId);
    const hooksFile = await uploadPdf(service.url, hooks.token, pdf);
    const readId = await warmUp(ops, { owner: fileId, hooks: hooksFile }, templateId, hooks.token);

    const meter = meterOf(cluster, admin, service.api, service.worker, peers);
    const context: Context = { service, admin, meter, idle: await idleRates(meter), ops, owner };
    const large = await documentOf(LARGE_MB);
    return [
      ...(await documentRows(context, pdf, DOCUMENTS, `a ${kB(pdf.byteLength)} five-page text PDF`)),
      ...(await documentRows(context, large, LARGE_DOCUMENTS, `a ${(large.byteLength / 1024 / 1024).toFixed(1)} MB scanned PDF`)),
      ...(await otherRows(context, readId, templateId, {
        ...hooks,
        fileId: hooksFile,
        receiver,
        heardBefore: receiver.events.length,
      })),
      idleRow(context.idle),
    ];
  } finally {
    await admin.end().catch(() => undefined);
    await service?.remove();
    await receiver.close();
    await peers.close();
    await cluster.close();
  }
}

function idleRow(idle: IdleRates): BenchRow {
  const perSecond = (value: number) => value * 1000;
  return {
    name: `costs: background, nothing asked (${IDLE_MS / 1000} s), per second`,
    figure:
      `CPU: API ${ms(perSecond(idle.api))} ms, worker ${ms(perSecond(idle.worker))} ms, PostgreSQL ${ms(perSecond(idle.postgres))} ms; ` +
      `worker: ${perSecond(idle.workerPolls).toFixed(1)} empty pg-boss polls, ${perSecond(idle.statements.worker).toFixed(1)} other statements; ` +
      `API: ${perSecond(idle.statements.api).toFixed(1)} statements`,
    baseline: 'subtracted from every row above, at these rates',
    ratio: NaN,
    floor: 'reported',
  };
}
