import type { EntityClass } from '@mikro-orm/core';
import type { Router } from 'express';
import type { TokenVerifier } from './auth/actor';
import type { Orm } from './db/orm';
import type { LoaderFactory } from './graphql/loaders';
import type { JobDefinition } from './jobs/jobs';
import type { RestRoute } from './rest/route';
import type { AppServices } from './services';

/**
 * What one module brings to the service, declared in its `index.ts`. The entry (src/modules.ts) collects the
 * manifests; platform code receives the pieces as parameters and never imports a module.
 */
export interface ModuleManifest {
  /** The module's folder under src/modules. */
  name: string;
  entities?: EntityClass<any>[];
  /** TypeGraphQL resolver classes (types, queries, mutations, subscriptions, field resolvers). */
  resolvers?: Function[];
  /** Documented REST routes, each served by a GraphQL root field. */
  restRoutes?: RestRoute[];
  jobs?: JobDefinition<any>[];
  /** Per-request DataLoaders over the module's own tables (see platform/graphql/loaders.ts). */
  loaders?: LoaderFactory;
  /** HTTP beside the two faces (the signing page and its API), mounted after /graphql and /api/v1. */
  mounts?: Mount[];
}

export interface Mount {
  path: string;
  router(services: AppServices): Router;
}

/** Everything the platform is started with: the union of the manifests, plus the users module's token check. */
export interface Composition {
  entities: EntityClass<any>[];
  resolvers: Function[];
  restRoutes: RestRoute[];
  jobs: JobDefinition<any>[];
  loaders: LoaderFactory[];
  mounts: Mount[];
  tokens(orm: Orm): TokenVerifier;
}

export function compose(
  manifests: readonly ModuleManifest[],
  extra: { entities: EntityClass<any>[]; tokens(orm: Orm): TokenVerifier },
): Composition {
  return {
    entities: [...manifests.flatMap((module) => module.entities ?? []), ...extra.entities],
    resolvers: manifests.flatMap((module) => module.resolvers ?? []),
    restRoutes: manifests.flatMap((module) => module.restRoutes ?? []),
    jobs: manifests.flatMap((module) => module.jobs ?? []),
    loaders: manifests.flatMap((module) => (module.loaders ? [module.loaders] : [])),
    mounts: manifests.flatMap((module) => module.mounts ?? []),
    tokens: extra.tokens,
  };
}
