import type { RestReader } from './rest/rest-reader';
import type PgBoss from 'pg-boss';
import type { AppConfig } from '../config';
import type { FaceMatcher } from './face';
import type { TokenVerifier } from './auth/actor';
import type { Orm } from './db/orm';
import type { EventBus } from './events/event-bus';
import type { LoaderFactory } from './graphql/loaders';
import type { Logger } from './logger';
import type { RateLimiter } from './rate-limit/rate-limiter';
import type { WorkerPool } from './workers/worker-pool';
import type { BlobStore } from './storage/blob-store';
import type { UrlSigner } from './storage/signed-urls';

/** The long-lived parts of one process, built once in main.ts (or by the test harness) and shared. */
export interface AppServices {
  config: AppConfig;
  log: Logger;
  orm: Orm;
  boss: PgBoss;
  blobs: BlobStore;
  urls: UrlSigner;
  events: EventBus;
  /** Who a bearer token stands for (implemented by the users module). */
  tokens: TokenVerifier;
  /** The modules' per-request DataLoaders (each request and subscription event makes its own set). */
  loaderFactories: readonly LoaderFactory[];
  /** Face comparison for the signer's face check; its model starts on first use. */
  faces: FaceMatcher;
  /** Request quotas per access token, signer token and client address, shared through PostgreSQL. */
  rateLimiter: RateLimiter;
  /** Worker threads for work on attacker-supplied bytes (PDF parsing and verification, images). */
  untrusted: WorkerPool;
  /** The documented REST reads, computed in-process for an actor (webhook events carry resources this way). */
  restReads: RestReader;
}
