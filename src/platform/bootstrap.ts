import path from 'node:path';
import PgBoss from 'pg-boss';
import type { AppConfig } from '../config';
import { databaseUrl, ensureDatabase, startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded-postgres';
import { openOrm } from './db/orm';
import { EventBus } from './events/event-bus';
import { leanRows } from './db/lean-sql';
import { RateLimiter } from './rate-limit/rate-limiter';
import { WorkerPool } from './workers/worker-pool';
import { createFaceMatcher } from './face';
import { createQueues, startWorkers } from './jobs/jobs';
import { QueuePool } from './jobs/queue-pool';
import { buildAppSchema } from './graphql/schema';
import { createRestReader } from './rest/rest-reads';
import type { Logger } from './logger';
import type { Composition } from './module';
import type { AppServices } from './services';
import { createBlobStore } from './storage';
import { UrlSigner } from './storage/signed-urls';

/**
 * The pool's tasks (src/untrusted-bytes.worker.ts) run compiled: from dist/ beside this file, or, when vitest
 * runs the sources, from the dist/ that `npm test` builds first.
 */
const UNTRUSTED_WORK_FILE =
  path.extname(__filename) === '.ts'
    ? path.resolve(__dirname, '../../dist/src/untrusted-bytes.worker.js')
    : path.resolve(__dirname, '../untrusted-bytes.worker.js');

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

/**
 * Opens the ORM over the composition's entities (migrating), starts pg-boss with every queue of its jobs, the
 * event bus and the blob store: what every process needs. Queue workers run here too unless RUN_WORKERS=false (then `npm run worker` does).
 */
export async function startServices(
  config: AppConfig,
  log: Logger,
  database: Database,
  composition: Composition,
  options: { workers?: boolean } = {},
): Promise<RunningServices> {
  const { jobs } = composition;
  const orm = await openOrm(database.url, { entities: composition.entities, poolMax: config.dbPoolMax, log });
  const queuePool = new QueuePool(database.url, {
    max: 4,
    applicationName: 'esign-queue',
    onError: (error) => log.error({ err: error }, 'pg-boss connection error'),
  });
  const boss = new PgBoss({ db: queuePool, schema: 'pgboss' });
  boss.on('error', (error: unknown) => log.error({ err: error }, 'pg-boss error'));
  // LISTEN needs a session of its own: DATABASE_LISTEN_URL sends it past a transaction-mode pooler (docs/scaling.md).
  const events = new EventBus(config.databaseListenUrl ?? database.url, log);
  try {
    await boss.start();
    await createQueues(boss, jobs);
    await events.start();
  } catch (error) {
    await boss.stop({ graceful: false }).catch(() => undefined);
    await queuePool.close();
    await orm.close();
    throw error;
  }
  const services: RunningServices = {
    config,
    log,
    orm,
    boss,
    blobs: createBlobStore(config.storage),
    urls: new UrlSigner(config.urlSigningSecret, config.publicUrl),
    events,
    tokens: composition.tokens(orm),
    loaderFactories: composition.loaders,
    faces: createFaceMatcher(),
    untrusted: new WorkerPool({ filename: UNTRUSTED_WORK_FILE, ...config.workers, workerData: { logLevel: config.logLevel } }),
    rateLimiter: new RateLimiter(
      (text, values) => leanRows(orm, text, values),
      (error) => log.warn({ err: error }, 'rate limit counts not shared this time; kept for the next flush'),
    ),
    restReads: createRestReader(
      () => services,
      () => buildAppSchema(composition.resolvers),
      composition.restRoutes,
    ),
    stop: async () => {
      await services.rateLimiter.stop();
      await services.untrusted.close();
      await services.faces.close();
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
      // pg-boss leaves a pool it was given open: closed here, once the queries asked of it (a worker's last fetch) are answered.
      await queuePool.close();
      await events.stop();
      await orm.close();
    },
  };
  services.rateLimiter.start();
  if (options.workers ?? config.runWorkers) await startWorkers(services, jobs, config.queuePollIntervalSeconds);
  return services;
}
