import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';
import type { EsignSession } from '../esign/esign-session.entity';
import type { Signer } from '../esign/signer.entity';
import { Notification } from '../notifications/notification.entity';
import type { OtpChannel } from './signer-otp.entity';
import { recipientOf } from './recipients';

/**
 * Queues the code's message in the caller's transaction; the returned function dispatches it after the commit.
 * (Placeholder until the notification module's renderer lands: a plain message in the outbox.)
 */
export async function deliverOneTimeCode(
  _services: AppServices,
  tx: EntityManager,
  input: { session: EsignSession; signer: Signer; channel: OtpChannel; code: string; expiresAt: Date },
): Promise<() => Promise<void>> {
  const text = `Your signing code is ${input.code}. It is valid for 10 minutes.`;
  tx.create(Notification, {
    user: input.session.user,
    session: input.session,
    signer: input.signer,
    kind: input.channel === 'email' ? 'email_otp' : 'mobile_otp',
    channel: input.channel === 'email' ? 'email' : 'sms',
    recipient: recipientOf(input.signer, input.channel).to,
    subject: input.channel === 'email' ? 'Your signing code' : undefined,
    textBody: text,
  });
  return async () => {};
}
