import { Field, Int, ObjectType } from 'type-graphql';
import { PageOf } from '../../platform/graphql/page-type';
import { DELIVERED_CODE_TEXT } from './deliver-notification';
import type { Notification } from './notification.entity';

@ObjectType('NotificationMessage', {
  simpleResolvers: true,
  description: 'One message of your outbox: an invite, a completion notice or a one-time code.',
})
export class NotificationMessageType {
  @Field()
  id!: string;

  @Field({ description: '`invite`, `completion`, `email_otp` or `mobile_otp`.' })
  kind!: string;

  @Field({ description: '`email`, `sms` or `whatsapp`.' })
  channel!: string;

  @Field({ description: 'Email address, or the phone number in E.164.' })
  recipient!: string;

  @Field(() => String, { nullable: true })
  subject!: string | null;

  @Field({ description: 'The plain-text part of an email; the whole message of an SMS or WhatsApp.' })
  text_body!: string;

  @Field(() => String, { nullable: true })
  html_body!: string | null;

  @Field(() => String, { nullable: true, description: 'Emails: the complete RFC 5322 message as handed to SMTP.' })
  mime!: string | null;

  @Field({ description: '`queued`, `sent` or `failed`.' })
  status!: string;

  @Field(() => String, { nullable: true, description: '`smtp`, `http` or `outbox` (kept here only).' })
  provider!: string | null;

  @Field(() => Int)
  attempts!: number;

  @Field(() => String, { nullable: true })
  last_error!: string | null;

  @Field()
  created_at!: Date;

  @Field(() => Date, { nullable: true })
  sent_at!: Date | null;

  @Field(() => String, { nullable: true })
  signer_id!: string | null;

  @Field(() => String, { nullable: true, description: 'The session it belongs to.' })
  client_id!: string | null;
}

@ObjectType('NotificationMessagePage', { simpleResolvers: true })
export class NotificationMessagePageType extends PageOf(NotificationMessageType) {}

/** A signer's one-time code is theirs, not the owner's: in production the owner sees that it was sent, never the code. */
export const HIDDEN_CODE_TEXT = 'A one-time code for the signer (not shown).';

/**
 * One outbox row as its owner reads it. A sandbox (where nobody real signs, and often no provider is configured)
 * shows one-time codes as written, so an integrator can drive a signer's checks; production never does.
 */
export function toNotificationView(row: Notification, env: 'sandbox' | 'production'): NotificationMessageType {
  // A delivered code's row keeps no code (DELIVERED_CODE_TEXT): shown as it is everywhere.
  const code = (row.kind === 'email_otp' || row.kind === 'mobile_otp') && row.textBody !== DELIVERED_CODE_TEXT;
  const secret = code && env !== 'sandbox';
  return {
    id: row.id,
    kind: row.kind,
    channel: row.channel,
    recipient: row.recipient,
    subject: row.subject ?? null,
    text_body: secret ? HIDDEN_CODE_TEXT : row.textBody,
    html_body: secret ? null : (row.htmlBody ?? null),
    mime: secret ? null : (row.mime ?? null),
    status: row.status,
    provider: row.provider ?? null,
    attempts: row.attempts,
    last_error: row.lastError ?? null,
    created_at: row.createdAt,
    sent_at: row.sentAt ?? null,
    signer_id: row.signer?.id ?? null,
    client_id: row.session?.id ?? null,
  };
}
