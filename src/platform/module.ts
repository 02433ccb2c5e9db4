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
  /** Implementations this module gives to slots other modules declare; compose() fills the slots. */
  provides?: Provision<any>[];
}

export interface Mount {
  path: string;
  router(services: AppServices): Router;
}

/**
 * A place where a module asks for an implementation it does not own (an interface it declares, filled by another
 * module): neither imports the other, and the entry's compose() wires them. Read it when the implementation is
 * used, not at load.
 */
export class Slot<T> {
  private implementation: T | undefined;

  constructor(readonly name: string) {}

  fill(implementation: T): void {
    this.implementation = implementation;
  }

  get(): T {
    if (this.implementation === undefined) {
      throw new Error(`Nothing provides ${this.name}: a module's manifest must, composed by the entry (src/modules.ts).`);
    }
    return this.implementation;
  }
}

export interface Provision<T> {
  slot: Slot<T>;
  implementation: T;
}

/** One entry of a manifest's `provides`, typed so that the implementation fits the slot. */
export function provide<T>(slot: Slot<T>, implementation: T): Provision<T> {
  return { slot, implementation };
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
  for (const { slot, implementation } of manifests.flatMap((module) => module.provides ?? [])) slot.fill(implementation);
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
