import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import { settleSessionStamps } from '../../stamps';
import { publishSessionChange, recordSessionWebhook } from '../session-events';
import { recordAudit } from '../../audit';
import { EsignSession } from '../esign-session.entity';

/**
 * Moves pending sessions past their expiry to `expired`. One conditional UPDATE decides, so a session
 * that is cancelled or completed at the same moment ends in exactly one state; running it twice is harmless.
 */
export async function expireDueSessions(
  services: AppServices,
  em: EntityManager,
  scope: { ids?: string[]; limit?: number } = {},
): Promise<string[]> {
  return em.transactional(async (tx) => {
    const filters = ['status = ?', 'expires_at <= now()'];
    const params: unknown[] = ['pending'];
    if (scope.ids) {
      if (scope.ids.length === 0) return [];
      filters.push(`id in (${scope.ids.map(() => '?').join(', ')})`);
      params.push(...scope.ids);
    }
    const rows = await tx.getConnection().execute<{ id: string; user_id: string }[]>(
      `update esign_sessions set status = 'expired', ended_at = now()
        where id in (select id from esign_sessions where ${filters.join(' and ')} order by expires_at limit ${scope.limit ?? 500} for update skip locked)
        returning id, user_id`,
      params,
      'all',
      tx.getTransactionContext(),
    );
    await settleSessionStamps(
      services,
      tx,
      rows.map((row) => row.id),
      'expired',
    );
    for (const row of rows) recordAudit(tx, { session: tx.getReference(EsignSession, row.id), event: 'session_expired' });
    await tx.flush();
    for (const row of rows) {
      await publishSessionChange(services, tx, { client_id: row.id, user_id: row.user_id, status: 'expired' });
      await recordSessionWebhook(services, tx, { id: row.id, userId: row.user_id }, 'esign.session.expired');
    }
    return rows.map((row) => row.id);
  });
}
