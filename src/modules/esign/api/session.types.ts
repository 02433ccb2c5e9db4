import { Field, Int, ObjectType } from 'type-graphql';
import { PageOf } from '../../../platform/graphql/page-type';
import type { SessionRecord } from './session-rows';
import type { ResentInvite } from '../signers/resend-invite';

@ObjectType('EmailTemplateOverrides', { simpleResolvers: true })
export class EmailTemplateOverridesType {
  @Field(() => String, { nullable: true })
  company_name!: string | null;

  @Field(() => String, { nullable: true })
  legal_name!: string | null;

  @Field(() => String, { nullable: true })
  support_email!: string | null;
}

@ObjectType('EsignSession', { simpleResolvers: true })
export class EsignSessionType {
  @Field()
  client_id!: string;

  @Field()
  user_id!: string;

  @Field()
  actor_id!: string;

  @Field()
  actor_type!: string;

  @Field()
  created_at!: Date;

  @Field()
  sign_type!: string;

  @Field(() => [Int])
  auth_mode!: number[];

  @Field()
  backend!: string;

  @Field()
  file_id!: string;

  @Field()
  current_pdf_file_id!: string;

  @Field()
  filename!: string;

  @Field(() => String, { nullable: true })
  folder!: string | null;

  @Field()
  allow_download!: boolean;

  @Field({ description: 'Whether a signer may delegate their place (added by this service).' })
  allow_delegation!: boolean;

  @Field({
    description: 'Whether the certificate of completion is appended to the signed PDF (added by this service).',
  })
  append_certificate!: boolean;

  @Field({ description: '`sequential` or `parallel` (added by this service).' })
  signing_order!: string;

  @Field(() => Int, { nullable: true, description: 'Hours between reminders; null: none (added by this service).' })
  reminder_interval_hours!: number | null;

  @Field(() => Int, { description: 'Reminders per signer at most (added by this service).' })
  reminder_max!: number;

  @Field()
  archived!: boolean;

  @Field(() => Int)
  expiry_seconds!: number;

  @Field({ description: 'When a pending session expires.' })
  expires_at!: Date;

  @Field(() => Int)
  max_retry!: number;

  @Field(() => String, { nullable: true })
  redirect_url!: string | null;

  @Field(() => String, { nullable: true })
  sender!: string | null;

  @Field(() => EmailTemplateOverridesType, { nullable: true })
  email_template_overrides!: EmailTemplateOverridesType | null;

  @Field(() => Int)
  signer_idx!: number;

  @Field({ description: '`pending`, `completed`, `expired`, `cancelled` or `declined` (a signer declined).' })
  status!: string;

  @Field(() => String, { nullable: true, description: 'Given with a cancellation.' })
  cancel_reason!: string | null;

  @Field(() => String, { nullable: true, description: 'The template the session was started from.' })
  template_id!: string | null;

  @Field(() => Int, { nullable: true, description: 'The version of that template.' })
  template_version!: number | null;

  /** For the signer mapping: placements shift by the stamp pages prefixed to the PDF. */
  stamp_page_count!: number;

  /** The document the stamp pages are in front of (the signers' positions shift by them there); GraphQL reads it under `documents`. */
  stampDocument!: number;
}

@ObjectType('EsignSessionPage', { simpleResolvers: true })
export class EsignSessionPageType extends PageOf(EsignSessionType) {}

@ObjectType('SignedPdfDownload', { simpleResolvers: true })
export class SignedPdfDownloadType {
  @Field({ description: 'A short-lived signed URL of the signed PDF.' })
  url!: string;

  @Field(() => Int, { description: 'Seconds the URL stays valid.' })
  expires_in!: number;
}

export function toSessionView(session: SessionRecord): EsignSessionType {
  return {
    client_id: session.id,
    user_id: session.user.id,
    actor_id: session.user.id,
    actor_type: 'user',
    created_at: session.createdAt,
    sign_type: session.signType,
    auth_mode: [session.authMode],
    backend: session.backend,
    file_id: session.file.id,
    current_pdf_file_id: session.currentPdfFile.id,
    filename: session.filename,
    folder: session.folder ?? null,
    allow_download: session.allowDownload,
    allow_delegation: session.allowDelegation,
    append_certificate: session.appendCertificate,
    signing_order: session.signingOrder,
    reminder_interval_hours: session.reminderIntervalHours ?? null,
    reminder_max: session.reminderMax,
    archived: session.archived,
    expiry_seconds: session.expirySeconds,
    expires_at: session.expiresAt,
    max_retry: session.maxRetry,
    redirect_url: session.redirectUrl ?? null,
    sender: session.sender ?? null,
    email_template_overrides: session.emailTemplateOverrides
      ? {
          company_name: session.emailTemplateOverrides.company_name ?? null,
          legal_name: session.emailTemplateOverrides.legal_name ?? null,
          support_email: session.emailTemplateOverrides.support_email ?? null,
        }
      : null,
    signer_idx: session.signerIdx,
    status: session.status,
    cancel_reason: session.cancelReason ?? null,
    template_id: session.template?.id ?? null,
    template_version: session.templateVersion ?? null,
    stamp_page_count: session.stampPageCount,
    stampDocument: session.stampDocument,
  };
}

@ObjectType('ResentInvite', { simpleResolvers: true })
export class ResentInviteType implements ResentInvite {
  @Field() client_id!: string;
  @Field() signer_id!: string;
  @Field(() => Int, { description: 'Messages queued: one per channel (email, WhatsApp, or SMS when neither).' })
  messages!: number;
  @Field(() => Int) resends_left_this_hour!: number;
}
