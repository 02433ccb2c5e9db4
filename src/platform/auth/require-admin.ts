import { AppError } from '../errors';
import type { Actor } from './actor';

/**
 * The one check of the admin operations, called first by each of their use cases (before any input is looked
 * at, so a user's token learns nothing about the arguments). A user's own token gets `403 forbidden`: the
 * operation exists and is not theirs to call. Resource ownership never answers 403 (see ownership.ts).
 */
export function requireAdmin(actor: Actor): void {
  if (!actor.admin) throw new AppError('forbidden');
}
