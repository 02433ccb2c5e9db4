import 'reflect-metadata';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { inject } from 'vitest';
import { createHttpApp, type HttpApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { composition } from '../../src/modules';
import { createLogger, logScope } from '../../src/platform/logger';
import { createUser } from '../../src/modules/users/create-user';
import { startServices, type RunningServices } from '../../src/platform/bootstrap';
import { databaseUrl } from '../../src/platform/db/embedded-postgres';
import type { BlobStore } from '../../src/platform/storage/blob-store';

export interface TestUser {
  user_id: string;
  token: string;
  token_id: string;
}

export interface TestApp {
  /** http://127.0.0.1:PORT */
  url: string;
  /** The database of this app (one per test file). */
  databaseUrl: string;
  services: RunningServices;
  http: HttpApp;
  /** Every log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  createUser(email?: string): Promise<TestUser>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Replaces the blob store, e.g. with one that fails, to see how faults surface. */
  blobs?: (real: BlobStore) => BlobStore;
}

/** Makes an empty database on the run's PostgreSQL (see global-setup.ts). */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject('pgAdminUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  return {
    url: databaseUrl(adminUrl, name),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/**
 * A port for a test app, outside the kernel's ephemeral range (32768-60999 here): a port picked with `listen(0)`
 * and bound again later could be taken meanwhile by any test's client socket or port-0 server (a TSA, an OCSP
 * responder, a webhook receiver), which left an app that never listened. Checked free, then used at once.
 */
export async function appPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** A real app on a real port over a fresh database, as main.ts would build it. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'esign-app-'));
  const port = await appPort();
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    DB_POOL_MAX: '5',
    QUEUE_POLL_INTERVAL_SECONDS: '0.5',
    // Limits on, but out of reach of tests that are not about them (test/security/rate-limits.test.ts is).
    RATE_LIMIT_PER_TOKEN: '1000000',
    RATE_LIMIT_PER_SIGNER: '1000000',
    RATE_LIMIT_PER_ADDRESS: '1000000',
    ...options.env,
  });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      callback();
    },
  });
  const log = createLogger(config.logLevel, sink);
  const services = await startServices(config, log, { url: database.url }, composition);
  if (options.blobs) services.blobs = options.blobs(services.blobs);
  const http = await createHttpApp(services, composition);
  await new Promise<void>((resolve, reject) => {
    http.server.once('error', reject);
    http.server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}`,
    databaseUrl: database.url,
    services,
    http,
    logs,
    createUser: (email) =>
      createUser(services.orm.em.fork(), { email: email ?? `user-${randomBytes(4).toString('hex')}@example.com` }),
    close: async () => {
      await http.close(1000);
      await services.stop();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

const measured = new AsyncLocalStorage<true>();

/**
 * How many SQL statements `run` caused (for the batching checks): those it ran itself, and those the app ran
 * while serving a request (every request runs in the log scope). A job or sweep of the queue that happens to
 * run in the same window is neither, and does not count.
 */
export async function statementsDuring(app: TestApp, run: () => Promise<void>): Promise<number> {
  const knex = app.services.orm.em.getConnection().getKnex();
  let statements = 0;
  const listener = () => {
    // Jobs run in a log scope of their own (`job:<queue>:<id>`, platform/jobs): not a request's.
    const scope = logScope.getStore();
    if (measured.getStore() || (scope && !scope.req_id.startsWith('job:'))) statements++;
  };
  knex.on('query', listener);
  try {
    await measured.run(true, run);
  } finally {
    knex.removeListener('query', listener);
  }
  return statements;
}
