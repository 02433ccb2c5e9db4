import { LockMode } from '@mikro-orm/core';
import type { AppServices } from '../../platform/services';
import { recordAudit } from '../audit';
import { Notification, type NotificationKind } from './notification.entity';
import { providerFor } from './providers';
import type { DeliverJobData } from './queue-notifications';

const AUDITED: Partial<Record<NotificationKind, 'invite_sent' | 'completion_sent'>> = {
  invite: 'invite_sent',
  completion: 'completion_sent',
};
const ONE_TIME_CODES: readonly NotificationKind[] = ['email_otp', 'mobile_otp'];

/** What stays of a one-time code message once a real provider has carried it. */
export const DELIVERED_CODE_TEXT = 'A one-time code was delivered; its text is not kept.';

/**
 * Delivers one queued notification. The row stays locked while its provider runs, so that two jobs for it
 * (a retry and the sweep's) cannot both send; a row that is no longer `queued` is left alone. Success marks
 * it `sent` (with the audit event of invites and completions); a failure counts the attempt, keeps the
 * error, and throws so that pg-boss retries; the attempt after the last retry marks it `failed`.
 */
export async function deliverNotification(services: AppServices, data: DeliverJobData): Promise<void> {
  const { retryLimit } = services.config.notifications;
  const failure = await services.orm.em.fork().transactional(async (tx) => {
    const row = await tx.findOne(Notification, { id: data.notification_id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!row || row.status !== 'queued') return undefined;
    if (data.not_after && Date.now() > Date.parse(data.not_after)) {
      tx.assign(row, { status: 'failed', lastError: 'the code expired before it could be delivered' });
      return undefined;
    }
    const provider = providerFor(services.config, row.channel);
    row.attempts += 1;
    row.provider = provider.name;
    try {
      await provider.deliver(row);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      tx.assign(row, { lastError: reason.slice(0, 2000), status: row.attempts > retryLimit ? 'failed' : 'queued' });
      return error instanceof Error ? error : new Error(reason);
    }
    tx.assign(row, { status: 'sent', sentAt: new Date(), lastError: null });
    // The code has reached the signer; the owner's outbox need not keep a credential of theirs.
    if (provider.name !== 'outbox' && ONE_TIME_CODES.includes(row.kind)) {
      tx.assign(row, { textBody: DELIVERED_CODE_TEXT, htmlBody: null, mime: null });
    }
    const event = AUDITED[row.kind];
    if (event && row.session) {
      recordAudit(tx, {
        session: row.session,
        signer: row.signer,
        event,
        details: { notification_id: row.id, channel: row.channel, provider: provider.name },
      });
    }
    return undefined;
  });
  if (failure) throw failure;
}
