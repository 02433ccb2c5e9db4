import path from 'node:path';
import PgBoss from 'pg-boss';
import type { AppConfig } from '../config';
import { databaseUrl, ensureDatabase, startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded-postgres';
import { openOrm } from './db/orm';
import type { Logger } from './logger';
import type { AppServices } from './services';
import { createBlobStore } from './storage';
import { UrlSigner } from './storage/signed-urls';

export const EMBEDDED_DATABASE_NAME = 'esign';

export interface Database {
  url: string;
  embedded?: EmbeddedDatabase;
}

/** DATABASE_URL when given; otherwise the embedded PostgreSQL under DATA_DIR/pg (started or reused). */
export async function openDatabase(config: AppConfig, log: Logger): Promise<Database> {
  if (config.databaseUrl) return { url: config.databaseUrl };
  const embedded = await startEmbeddedPostgres(path.join(config.dataDir, 'pg'), log);
  await ensureDatabase(embedded.adminUrl, EMBEDDED_DATABASE_NAME);
  const url = databaseUrl(embedded.adminUrl, EMBEDDED_DATABASE_NAME);
  log.info({ owned: embedded.owned }, 'using the embedded PostgreSQL (no DATABASE_URL given)');
  return { url, embedded };
}

export interface RunningServices extends AppServices {
  /** Stops the queue (letting running jobs finish) and closes the database pool. */
  stop(): Promise<void>;
}

/** Opens the ORM (migrating), starts pg-boss and builds the blob store: what every process needs. */
export async function startServices(config: AppConfig, log: Logger, database: Database): Promise<RunningServices> {
  const orm = await openOrm(database.url, { poolMax: config.dbPoolMax, log });
  const boss = new PgBoss({ connectionString: database.url, schema: 'pgboss', max: 4, application_name: 'esign-queue' });
  boss.on('error', (error: unknown) => log.error({ err: error }, 'pg-boss error'));
  try {
    await boss.start();
  } catch (error) {
    await orm.close();
    throw error;
  }
  return {
    config,
    log,
    orm,
    boss,
    blobs: createBlobStore(config.storage),
    urls: new UrlSigner(config.urlSigningSecret, config.publicUrl),
    stop: async () => {
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
      await orm.close();
    },
  };
}
