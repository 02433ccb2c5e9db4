import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../../platform/auth/actor';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { EsignSession, Signer } from '../esign-session.entity';
import { getOwnSession } from '../session/own-session';

/** What an owner's action on one signer gets: the session locked, the signer, and how to refuse with 409. */
export interface OwnerSignerAction {
  session: EsignSession;
  signer: Signer;
  refuse(problem: string): AppError;
}

/**
 * The frame of an owner's action on one signer of a pending session (resend-invite, reassign-signer): both ids
 * required, the session the caller's (else 404, as for any foreign session), then in one transaction the session row
 * locked, the signer found in it (else 404) and both still pending (else 409), and `act` run.
 */
export async function actOnPendingSigner<T>(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  input: { client_id?: string | null; signer_id?: string | null },
  act: (tx: EntityManager, target: OwnerSignerAction) => Promise<T>,
): Promise<T> {
  const missing = (['client_id', 'signer_id'] as const).filter((field) => !input[field]);
  if (missing.length > 0) throw AppError.missingFields([...missing]);
  const owned = await getOwnSession(services, em, actor, input.client_id!);
  return em.transactional(async (tx) => {
    const session = await tx.findOneOrFail(
      EsignSession,
      { id: owned.id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    const signer = await tx.findOne(Signer, { id: input.signer_id!, session }, { refresh: true });
    if (!signer) throw new AppError('not_found', { errors: [{ field: 'signer_id', problem: 'no such signer in this session' }] });
    const refuse = (problem: string) => new AppError('conflict', { message: problem, errors: [{ field: 'signer_id', problem }] });
    if (session.status !== 'pending') throw refuse(`the session is ${session.status}`);
    if (signer.status !== 'pending') throw refuse(`the signer is ${signer.status}`);
    return act(tx, { session, signer, refuse });
  });
}
