import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { AppError } from '../../platform/errors';
import { enqueue } from '../../platform/jobs/enqueue';
import type { AppServices } from '../../platform/services';
import { cancelSession } from '../esign';
import { publishBulkChange, recordBulkWebhook } from './bulk-events';
import { Bulk } from './bulk.entity';
import { getOwnBulk } from './read-bulks';

export const CANCEL_BULK_SESSIONS_JOB = 'bulk.cancel-sessions';

/** The reason the sessions of a cancelled bulk carry. */
const CANCEL_REASON = 'the bulk send was cancelled';

/**
 * Cancels a bulk, under its row lock (a chunk being made finishes first, and its rows count as made): rows not yet
 * made are skipped at once; the sessions made are cancelled by a job (CANCEL_BULK_SESSIONS_JOB), each as
 * esign/cancel cancels one, which gives back its stamps. A bulk cancelled already is `409`.
 */
export async function cancelBulk(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  clientId: string | null | undefined,
): Promise<Bulk> {
  const bulk = await getOwnBulk(em, actor, clientId);
  await em.transactional(async (tx) => {
    const context = tx.getTransactionContext();
    const connection = tx.getConnection();
    const [state] = await connection.execute<{ status: string }[]>(
      'select status from bulks where id = ? for update',
      [bulk.id],
      'all',
      context,
    );
    if (state?.status === 'cancelled')
      throw new AppError('conflict', {
        message: 'the bulk is cancelled already',
        errors: [{ field: 'client_id', problem: 'cancelled' }],
      });
    await connection.execute(
      `update bulks set status = 'cancelled', finished_at = coalesce(finished_at, now()) where id = ?`,
      [bulk.id],
      'all',
      context,
    );
    await connection.execute(
      `update bulk_rows set status = 'skipped', done_at = now() where bulk_id = ? and status = 'queued'`,
      [bulk.id],
      'all',
      context,
    );
    await enqueue(services.boss, tx, [{ name: CANCEL_BULK_SESSIONS_JOB, data: { bulk_id: bulk.id } }]);
    const owner = { id: bulk.id, userId: actor.userId };
    await publishBulkChange(services, tx, owner);
    await recordBulkWebhook(services, tx, owner, 'esign.bulk.cancelled');
  });
  await em.refresh(bulk);
  return bulk;
}

/** The job behind a cancel: each pending session the bulk made is cancelled (one that ended meanwhile stays as it is). */
export async function cancelBulkSessions(services: AppServices, bulkId: string): Promise<void> {
  const em = services.orm.em.fork();
  const bulk = await em.findOne(Bulk, { id: bulkId });
  if (!bulk) return;
  const actor: Actor = { userId: bulk.user.id, tokenId: `bulk:${bulk.id}` };
  const rows = await em.getConnection().execute<{ session_id: string }[]>(
    `select r.session_id from bulk_rows r join esign_sessions s on s.id = r.session_id
      where r.bulk_id = ? and r.status = 'created' and s.status = 'pending' order by r.position`,
    [bulk.id],
  );
  for (const { session_id: sessionId } of rows) {
    try {
      await cancelSession(services, em.fork(), actor, { client_id: sessionId, reason: CANCEL_REASON });
    } catch (error) {
      // Signed, declined or expired meanwhile: it is no longer the bulk's to cancel.
      if (!(error instanceof AppError && error.code === 'conflict')) throw error;
    }
  }
  await publishBulkChange(services, em, { id: bulk.id, userId: bulk.user.id });
}
