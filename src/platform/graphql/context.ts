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
}

export function createRequestContext(services: AppServices, actor: Actor): RequestContext {
  const em = services.orm.em.fork();
  return { actor, em, loaders: createLoaders(em), services };
}
