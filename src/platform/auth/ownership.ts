import { AppError } from '../errors';
import type { Actor } from './actor';

/** A row that belongs to one user (files, sessions, orders, templates...). */
export interface Owned {
  user: { id: string };
}

/**
 * The one ownership rule of resolvers that load a row by id (a nested field, a subscription event): only the
 * actor's own row is shown. What is absent or someone else's reads as absent: `null` for a nullable field
 * (`ownedOrNull`), `not_found` for one that cannot be null (`ownedOrNotFound`). Never "forbidden": that
 * would tell a caller the id exists.
 */
export function ownedOrNull<T extends Owned>(actor: Actor, row: T | null | undefined): T | null {
  return row && row.user.id === actor.userId ? row : null;
}

export function ownedOrNotFound<T extends Owned>(actor: Actor, row: T | null | undefined): T {
  const own = ownedOrNull(actor, row);
  if (!own) throw new AppError('not_found');
  return own;
}
