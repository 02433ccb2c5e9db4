import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import forge from 'node-forge';
import pg from 'pg';
import { createHttpApp, type HttpApp } from '../src/app';
import { loadConfig, type AppConfig } from '../src/config';
import { composition } from '../src/modules';
import { createRootCa, issueSigningCertificate } from '../src/modules/signing/certificates';
import { createUser } from '../src/modules/users/create-user';
import { creditWallet } from '../src/modules/wallet/credit-wallet';
import { startServices, type RunningServices } from '../src/platform/bootstrap';
import { databaseUrl, freePort, startEmbeddedPostgres, type EmbeddedDatabase } from '../src/platform/db/embedded-postgres';
import { createLogger } from '../src/platform/logger';
import { benchTsaUrl } from './signing-peers';

export interface BenchApp {
  url: string;
  databaseUrl: string;
  config: AppConfig;
  services: RunningServices;
  http: HttpApp;
  /** The variables the service was configured with: a worker process started with them works the same database and blobs. */
  env: Record<string, string>;
  /** A user with a fresh token and, when asked, money in the wallet. */
  createUser(walletRupees?: number): Promise<{ user_id: string; token: string }>;
  close(): Promise<void>;
}

export interface BenchDatabase {
  /** An empty database of its own for one app. */
  create(): Promise<string>;
  close(): Promise<void>;
}

/** The run's PostgreSQL: DATABASE_URL (it must allow CREATE DATABASE), or an embedded cluster in a temporary directory. */
export async function openBenchDatabase(): Promise<BenchDatabase> {
  let cluster: EmbeddedDatabase | undefined;
  let dir: string | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    dir = await mkdtemp(path.join(os.tmpdir(), 'esign-bench-pg-'));
    await chmod(dir, 0o755);
    cluster = await startEmbeddedPostgres(path.join(dir, 'pg'));
    adminUrl = cluster.adminUrl;
  }
  const created: string[] = [];
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    create: async () => {
      const name = `bench_${randomBytes(5).toString('hex')}`;
      await admin(`create database ${name}`);
      created.push(name);
      return databaseUrl(adminUrl!, name);
    },
    close: async () => {
      for (const name of created) await admin(`drop database if exists ${name} with (force)`).catch(() => undefined);
      await cluster?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface BenchServiceEnv {
  /** Production mode, secrets and a platform PKCS#12 generated for the run, a data directory of its own. */
  env: Record<string, string>;
  port: number;
  dataDir: string;
  /** Removes the data directory (blobs, the PKCS#12). */
  remove(): Promise<void>;
}

/**
 * The environment startBenchApp configures the service with, for a benchmark that runs the service in a process
 * of its own (`dist-bench/src/main.js` or `dist-bench/src/worker.js`) on `databaseUrl`.
 */
export async function benchServiceEnv(databaseUrl: string, env: Record<string, string> = {}): Promise<BenchServiceEnv> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'esign-bench-app-'));
  const port = await freePort();
  const pfxPath = path.join(dataDir, 'platform.pfx');
  await writeFile(pfxPath, await benchPlatformPfx());
  return {
    env: {
      APP_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      URL_SIGNING_SECRET: randomBytes(24).toString('hex'),
      SECRETS_ENCRYPTION_KEY: randomBytes(24).toString('hex'),
      PLATFORM_SIGNING_PFX: pfxPath,
      PLATFORM_SIGNING_PFX_PASSWORD: 'bench',
      TSA_URL: await benchTsaUrl(),
      ALLOW_SANDBOX_ESP: 'true',
      ALLOW_SIMULATED_VENDOR: 'true',
      DB_POOL_MAX: '10',
      QUEUE_POLL_INTERVAL_SECONDS: '0.5',
      // The limiter runs (its cost is part of every figure) with quotas no benchmark reaches.
      RATE_LIMIT_PER_TOKEN: '100000000',
      RATE_LIMIT_PER_SIGNER: '100000000',
      RATE_LIMIT_PER_ADDRESS: '100000000',
      ...env,
    },
    port,
    dataDir,
    remove: () => rm(dataDir, { recursive: true, force: true }),
  };
}

/**
 * The service as production runs it (APP_ENV=production, compiled JS, logs at warn), with the secrets and
 * switches production insists on generated for the run, on a database of its own.
 */
export async function startBenchApp(database: BenchDatabase, env: Record<string, string> = {}): Promise<BenchApp> {
  const url = await database.create();
  const prepared = await benchServiceEnv(url, env);
  const config = loadConfig(prepared.env);
  const log = createLogger(config.logLevel);
  const services = await startServices(config, log, { url }, composition);
  const http = await createHttpApp(services, composition);
  await new Promise<void>((resolve) => http.server.listen(prepared.port, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${prepared.port}`,
    databaseUrl: url,
    config,
    services,
    http,
    env: prepared.env,
    createUser: async (walletRupees) => {
      const created = await createUser(services.orm.em.fork(), { email: `bench-${randomBytes(5).toString('hex')}@example.com` });
      if (walletRupees) await creditWallet(services.orm.em.fork(), created.user_id, BigInt(walletRupees) * 100n);
      return { user_id: created.user_id, token: created.token };
    },
    close: async () => {
      await http.close(1000);
      await services.stop();
      await prepared.remove();
    },
  };
}

/** A PKCS#12 for the platform signer (production requires one). */
async function benchPlatformPfx(): Promise<Buffer> {
  const root = createRootCa('Bench Root', 'Bench');
  const signer = issueSigningCertificate(
    root,
    { commonName: 'Bench Platform Signer' },
    { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000) },
  );
  const p12 = forge.pkcs12.toPkcs12Asn1(
    forge.pki.privateKeyFromPem(signer.privateKeyPem),
    [forge.pki.certificateFromPem(signer.certificatePem), forge.pki.certificateFromPem(root.certificatePem)],
    'bench',
    { algorithm: '3des' },
  );
  return Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary');
}

/** Percentile of a list of numbers (0..100). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
