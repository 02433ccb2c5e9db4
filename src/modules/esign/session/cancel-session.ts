import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import type { Actor } from '../../../platform/auth/actor';
import { EsignSession } from '../esign-session.entity';
import { getOwnSession } from './own-session';
import { settleSessionStamps } from '../../stamps';
import { publishSessionChange, recordSessionWebhook } from '../session-events';
import { recordAudit } from '../../audit';

/** Ends a pending session for good; its signer links stop working. Only a pending session can be cancelled. */
export async function cancelSession(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  input: { client_id?: string | null; reason?: string | null },
): Promise<EsignSession> {
  if (!input.client_id) throw AppError.missingFields(['client_id']);
  const reason = input.reason?.trim() || undefined;
  if (reason && reason.length > 500) throw AppError.badRequest([{ field: 'reason', problem: 'at most 500 characters' }]);
  const session = await getOwnSession(services, em, actor, input.client_id);
  const cancelled = await em.transactional(async (tx) => {
    const rows = await tx.getConnection().execute<{ id: string }[]>(
      `update esign_sessions set status = 'cancelled', cancel_reason = ?, ended_at = now()
        where id = ? and user_id = ? and status = 'pending' returning id`,
      [reason ?? null, session.id, actor.userId],
      'all',
      tx.getTransactionContext(),
    );
    if (rows.length === 0) return false;
    recordAudit(tx, { session, event: 'session_cancelled', details: { reason: reason ?? null, by: actor.userId } });
    await tx.flush();
    await settleSessionStamps(services, tx, [session.id], 'cancelled');
    await publishSessionChange(services, tx, { client_id: session.id, user_id: actor.userId, status: 'cancelled' });
    await recordSessionWebhook(services, tx, { id: session.id, userId: actor.userId }, 'esign.session.cancelled');
    return true;
  });
  await em.refresh(session);
  if (!cancelled) {
    throw new AppError('conflict', {
      message: `session is ${session.status}; only a pending session can be cancelled`,
      errors: [{ field: 'client_id', problem: `session is ${session.status}` }],
    });
  }
  return session;
}
