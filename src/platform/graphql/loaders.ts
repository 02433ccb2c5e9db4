import type { EntityManager } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm';

/**
 * Per-request batch loaders, one set per request (or per subscription event). Each module declares its own
 * loaders by augmenting this interface and contributes a factory through its manifest:
 *
 *     declare module '../../platform/graphql/loaders' { interface Loaders { fileById: DataLoader<...> } }
 */
export interface Loaders {}

/** Makes one module's loaders for one request; `entityManager` is the request's (forked on first use). */
export type LoaderFactory = (entityManager: () => EntityManager, orm: Orm) => Partial<Loaders>;

export function createLoaders(factories: readonly LoaderFactory[], orm: Orm, entityManager: () => EntityManager): Loaders {
  return Object.assign({}, ...factories.map((factory) => factory(entityManager, orm))) as Loaders;
}

/**
 * For loaders keyed `parent|window...` (a page of each parent's children): the parents asking for one window are
 * read together, so a page of parents costs one read per distinct window, whatever their number. `read` gets the
 * window's parts and its parents, and answers each parent's children.
 */
export async function loadByWindow<T>(
  keys: readonly string[],
  read: (window: string[], parentIds: string[]) => Promise<(parentId: string) => T[]>,
): Promise<T[][]> {
  const parentsByWindow = new Map<string, string[]>();
  for (const key of keys) {
    const [parentId, ...window] = key.split('|');
    const group = window.join('|');
    parentsByWindow.set(group, [...(parentsByWindow.get(group) ?? []), parentId]);
  }
  const byKey = new Map<string, T[]>();
  for (const [window, parentIds] of parentsByWindow) {
    const childrenOf = await read(window.split('|'), parentIds);
    for (const parentId of parentIds) byKey.set(`${parentId}|${window}`, childrenOf(parentId));
  }
  return keys.map((key) => byKey.get(key) ?? []);
}
