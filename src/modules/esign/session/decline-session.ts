import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import { queueNotifications, renderDeclineNotice } from '../../notifications';
import { settleSessionStamps } from '../../stamps';
import { User } from '../../users';
import type { EsignSession, Signer } from '../esign-session.entity';
import { publishSignerChange, recordSessionWebhook } from '../session-events';
import { queueRequestEnded } from '../signers/signer-messages';

/**
 * A signer's "no": the signer becomes `declined` and the session `declined`, a final state like `cancelled`. In the
 * caller's transaction, with the session row locked (lockSigner): its stamps go back to the inventory, the audit
 * trail keeps the reason, subscribers and webhooks hear it, the owner gets an email, and the other signers it had
 * asked hear that it ended. No one signs after it.
 */
export async function recordDecline(
  services: AppServices,
  tx: EntityManager,
  input: { session: EsignSession; signer: Signer; reason: string; origin: RequestOrigin },
): Promise<void> {
  const { session, signer, reason, origin } = input;
  const now = new Date();
  signer.status = 'declined';
  signer.declineReason = reason;
  signer.declinedAt = now;
  session.status = 'declined';
  session.endedAt = now;
  recordAudit(tx, { session, signer, event: 'signer_declined', origin, details: { reason } });
  await tx.flush();
  await settleSessionStamps(services, tx, [session.id], 'declined');
  await publishSignerChange(services, tx, session, signer);
  await recordSessionWebhook(services, tx, { id: session.id, userId: session.user.id }, 'esign.session.declined', signer.id);
  const owner = await tx.findOneOrFail(User, { id: session.user.id });
  // To the owner, in English: owners have no language of their own (the catalogs hold it in every language).
  const notice = renderDeclineNotice({ signerName: signer.fullName, filename: session.filename, sessionId: session.id, reason });
  await queueNotifications(services, tx, [
    {
      user: owner,
      session,
      signer,
      kind: 'session_declined',
      channel: 'email',
      recipient: owner.email,
      subject: notice.subject,
      textBody: notice.text,
    },
  ]);
  await queueRequestEnded(services, tx, session, signer);
}
