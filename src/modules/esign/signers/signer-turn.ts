import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { hashToken } from '../../../platform/auth/bearer';
import { AppError } from '../../../platform/errors';
import { EsignSession, Signer, type SigningOrder } from '../esign-session.entity';

/** The rules of a signer's turn, shared by every step a signer takes (checks, signing, viewing). */

/** The signer a signer token opens; an unknown token is `401 unauthorized` (integrator tokens never match). */
export async function signerByToken(em: EntityManager, token: string | null): Promise<Signer> {
  const signer = token ? await em.findOne(Signer, { tokenHash: hashToken(token) }, { populate: ['session'] }) : null;
  if (!signer) throw new AppError('unauthorized');
  return signer;
}

/**
 * Locks the signer's session row and reads both afresh, checking only that the signer is still the person the
 * request authenticated as: for finishing a step that was admitted under the checks (a face attempt taken while
 * pending is recorded even if a concurrent one failed the signer).
 *
 * `found` is the signer as read when the request's token was checked (signerByToken), before the lock. A hand-over
 * (reassign-signer, delegate) that committed since gave the place a new token and a new person: the request then
 * speaks for someone who is no longer this signer, and is answered 401 with nothing done, as its token now is.
 */
export async function lockSessionOf(tx: EntityManager, found: Signer): Promise<{ session: EsignSession; signer: Signer }> {
  // Read before the refresh below, which updates this same entity in place.
  const authenticatedAs = found.tokenHash;
  const locked = await lockSessionOfSigner(tx, { sessionId: found.session.id, signerId: found.id });
  if (locked.signer.tokenHash !== authenticatedAs) throw new AppError('unauthorized');
  return locked;
}

/**
 * Locks a signer's session row and reads both afresh, checking nothing: for a step that does not act on a signer
 * token (an ESP's answer checks the person against its own transaction).
 */
export async function lockSessionOfSigner(
  tx: EntityManager,
  ids: { sessionId: string; signerId: string },
): Promise<{ session: EsignSession; signer: Signer }> {
  // `refresh`: the transaction's entity manager starts with a copy of the caller's identity map, whose rows
  // were read before the lock; what concurrent requests changed meanwhile must be read again under it.
  const session = await tx.findOneOrFail(
    EsignSession,
    { id: ids.sessionId },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
  );
  const signer = await tx.findOneOrFail(Signer, { id: ids.signerId, session }, { refresh: true });
  return { session, signer };
}

/**
 * Locks the session and checks that this signer is still part of it: the session and the signer pending, whether
 * or not it is their turn (a signer may decline before their turn comes).
 */
export async function lockSigner(tx: EntityManager, found: Signer): Promise<{ session: EsignSession; signer: Signer }> {
  const { session, signer } = await lockSessionOf(tx, found);
  if (session.status !== 'pending') throw new AppError('conflict', { message: `the session is ${session.status}` });
  if (signer.status !== 'pending') throw new AppError('conflict', { message: `this signer is ${signer.status}` });
  return { session, signer };
}

/** Whether this signer may sign now: in a parallel session every pending signer may, else only the one whose turn it is. */
export function isSignersTurn(
  session: { status: string; signerIdx: number; signingOrder: SigningOrder },
  signer: { status: string; position: number },
): boolean {
  if (session.status !== 'pending' || signer.status !== 'pending') return false;
  return session.signingOrder === 'parallel' || signer.position === session.signerIdx;
}

/** Locks the session and checks that this signer may act now. */
export async function lockTurn(tx: EntityManager, found: Signer): Promise<{ session: EsignSession; signer: Signer }> {
  const { session, signer } = await lockSigner(tx, found);
  if (!isSignersTurn(session, signer)) throw new AppError('conflict', { message: 'it is not this signer’s turn yet' });
  return { session, signer };
}
