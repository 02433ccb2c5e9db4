import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../modules/users/access-tokens';
import type { AppServices } from '../services';

/** Per-request state: who is calling, and a forked entity manager nobody else shares. */
export interface RequestContext {
  actor: Actor;
  em: EntityManager;
  services: AppServices;
}

export function createRequestContext(services: AppServices, actor: Actor): RequestContext {
  return { actor, em: services.orm.em.fork(), services };
}
