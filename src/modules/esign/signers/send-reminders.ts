import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import { recordAudit } from '../../audit';
import { EsignSession, Signer } from '../esign-session.entity';
import { recordSessionWebhook } from '../session-events';
import { queueInvite } from './signer-messages';

/**
 * Reminds the signers whose turn it is (every pending signer of a parallel session) and who have waited `reminder_interval_hours` since their invite or last
 * reminder, while their session is pending and they have had fewer than `reminder_max`. A reminder is the invite
 * again, through the channels the signer has. Signing, declining or the session's end stop them: such signers are
 * no longer picked. Rows are claimed with SKIP LOCKED, so sweeps in several processes never remind twice.
 * Answers the signers reminded.
 */
export async function sendDueReminders(services: AppServices, em: EntityManager, limit = 100): Promise<string[]> {
  return em.transactional(async (tx) => {
    const due = await tx.getConnection().execute<{ signer_id: string }[]>(
      `select g.id as signer_id
         from esign_signers g join esign_sessions s
           on s.id = g.session_id and (s.signing_order = 'parallel' or g.position = s.signer_idx)
        where s.status = 'pending' and s.expires_at > now() and s.reminder_interval_hours is not null
          and g.status = 'pending' and g.reminders_sent < s.reminder_max
          and coalesce(g.last_reminded_at, g.invited_at, s.created_at) + make_interval(hours => s.reminder_interval_hours) <= now()
        order by coalesce(g.last_reminded_at, g.invited_at, s.created_at)
        limit ? for update of g skip locked`,
      [limit],
      'all',
      tx.getTransactionContext(),
    );
    if (due.length === 0) return [];
    const signers = await tx.find(Signer, { id: { $in: due.map((row) => row.signer_id) } }, { populate: ['session'] });
    for (const signer of signers) {
      const session = signer.session as EsignSession;
      const queued = await queueInvite(services, tx, session, signer, { reminder: true });
      // Counted even when the signer has nowhere to be reached: the sweep must not pick them again and again.
      signer.remindersSent += 1;
      signer.lastRemindedAt = new Date();
      recordAudit(tx, {
        session,
        signer,
        event: 'reminder_sent',
        details: { reminder: signer.remindersSent, of: session.reminderMax, messages: queued.length },
      });
      await recordSessionWebhook(services, tx, { id: session.id, userId: session.user.id }, 'esign.signer.reminded', signer.id);
    }
    await tx.flush();
    return signers.map((signer) => signer.id);
  });
}
