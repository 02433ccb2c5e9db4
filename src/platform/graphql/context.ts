import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../auth/actor';
import type { RequestOrigin } from '../auth/request-origin';
import type { Orm } from '../db/orm';
import { createLoaders, type LoaderFactory, type Loaders } from './loaders';

/**
 * The services a request is read with. This file uses only the ORM and the modules' loaders; the composition
 * (platform/services.ts) widens the interface to the whole AppServices by augmenting it, so resolvers see every
 * service while graphql/ imports nothing above it.
 */
export interface ContextServices {
  orm: Orm;
  loaderFactories: readonly LoaderFactory[];
}

/** Per-request state: who is calling, a forked entity manager and batch loaders nobody else shares. */
export interface RequestContext {
  actor: Actor;
  em: EntityManager;
  loaders: Loaders;
  services: ContextServices;
  /** The `Idempotency-Key` request header, for operations that honour it. */
  idempotencyKey?: string;
  /** Where the request came from (address, browser), for the audit rows of admin operations. */
  origin?: RequestOrigin;
}

export function createRequestContext(
  services: ContextServices,
  actor: Actor,
  headers?: Record<string, string | string[] | undefined>,
  origin?: RequestOrigin,
): RequestContext {
  const key = headers?.['idempotency-key'];
  return new LazyRequestContext(services, actor, typeof key === 'string' ? key : undefined, origin);
}

/** Forks its entity manager (and makes its loaders) on first use: the hottest reads never touch the ORM. */
class LazyRequestContext implements RequestContext {
  private forked?: EntityManager;
  private batched?: Loaders;

  constructor(
    readonly services: ContextServices,
    readonly actor: Actor,
    readonly idempotencyKey: string | undefined,
    readonly origin: RequestOrigin | undefined,
  ) {}

  get em(): EntityManager {
    return (this.forked ??= this.services.orm.em.fork());
  }

  set em(em: EntityManager) {
    this.forked = em;
  }

  get loaders(): Loaders {
    return (this.batched ??= createLoaders(this.services.loaderFactories, this.services.orm, () => this.em));
  }

  set loaders(loaders: Loaders) {
    this.batched = loaders;
  }
}

const perEvent = new WeakMap<object, Pick<RequestContext, 'em' | 'loaders'>>();

/**
 * The context one subscription event is read with. Every subscriber of a topic in this process receives the
 * same event object, so they share one entity manager and one set of loaders for it: 500 subscribers of an
 * order cost one read per event, not 500. (Subscriptions are owner-only, so the sharers are the same owner.)
 */
export function eventContext(services: ContextServices, actor: Actor, event: object): RequestContext {
  let shared = perEvent.get(event);
  if (!shared) {
    const em = services.orm.em.fork();
    shared = { em, loaders: createLoaders(services.loaderFactories, services.orm, () => em) };
    perEvent.set(event, shared);
  }
  return { actor, services, ...shared };
}
