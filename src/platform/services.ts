import type PgBoss from 'pg-boss';
import type { AppConfig } from '../config';
import type { FaceMatcher } from './face';
import type { Actor, TokenVerifier } from './auth/actor';
import type { Orm } from './db/orm';
import type { EventBus } from './events/event-bus';
// Imported for the arrow only: the augmentations at the end of this file widen an interface of each.
import type {} from './graphql/context';
import type {} from './jobs/jobs';
import type { LoaderFactory } from './graphql/loaders';
import type { Logger } from './logger';
import type { RateLimiter } from './rate-limit/rate-limiter';
import type { WorkerPool } from './workers/worker-pool';
import type { BlobStore } from './storage/blob-store';
import type { UrlSigner } from './storage/signed-urls';

/**
 * The long-lived parts of one process, built once in bootstrap.ts (or by the test harness) and shared. It sits above
 * the mechanisms it composes: they never import this file, they declare what they use (`JobServices`,
 * `ContextServices`, or a parameter such as `{ tokens }`).
 */
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

/**
 * A documented REST read's `data`, computed in-process for a given actor: what `GET /api/v1/<path>` answers that
 * actor, without HTTP. Webhook events carry their resource this way, as the REST reads show it (rest/rest-reads.ts
 * implements it).
 */
export interface RestReader {
  /** Null when the read fails (the resource is gone, or no longer the actor's). */
  read(operation: `Query.${string}`, variables: Record<string, unknown>, actor: Actor): Promise<unknown>;
}

// A job's handler and a resolver's context are handed the whole composition: the files that declare them
// (jobs/jobs.ts, graphql/context.ts) name only what they use themselves, and these augmentations widen those
// interfaces to AppServices for the modules, without an import from the mechanisms back up to this file.
declare module './jobs/jobs' {
  interface JobServices extends AppServices {}
}
declare module './graphql/context' {
  interface ContextServices extends AppServices {}
}
