import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../modules/users/access-tokens';
import type { AppServices } from '../services';
import { createLoaders, type Loaders } from './loaders';

/** Per-request state: who is calling, a forked entity manager and batch loaders nobody else shares. */
export interface RequestContext {
  actor: Actor;
  em: EntityManager;
  loaders: Loaders;
  services: AppServices;
  /** The `Idempotency-Key` request header, for operations that honour it. */
  idempotencyKey?: string;
}

export function createRequestContext(
  services: AppServices,
  actor: Actor,
  headers?: Record<string, string | string[] | undefined>,
): RequestContext {
  const em = services.orm.em.fork();
  const key = headers?.['idempotency-key'];
  return { actor, em, loaders: createLoaders(em), services, idempotencyKey: typeof key === 'string' ? key : undefined };
}
