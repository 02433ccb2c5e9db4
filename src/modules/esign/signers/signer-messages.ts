import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import { signedName } from '../file-names';
import { type EsignDocument, type EsignSession, Signer } from '../esign-session.entity';
import { signerInviteUrl } from './signer-token';
import { StoredFile } from '../../files';
import { languageOrFallback } from '../../../platform/i18n';
import {
  brandingOf,
  composeMime,
  queueNotifications,
  renderCompletion,
  renderInvite,
  renderOneTimeCode,
  renderReminder,
  renderRequestEnded,
  type NotificationChannel,
  type NotificationDraft,
  type NotificationKind,
  type RenderedMessage,
} from '../../notifications';

interface Address {
  channel: NotificationChannel;
  recipient: string;
}

/**
 * Where a signer's invite and completion messages go: email when the signer has an address, WhatsApp in
 * addition when `notification.whatsapp` is set and there is a mobile; a signer with only a mobile and no
 * WhatsApp flag gets an SMS, so that `invite` / `completion` always reach someone who can be reached.
 */
function addressesOf(signer: Signer): Address[] {
  const phone = phoneOf(signer);
  const out: Address[] = [];
  if (signer.email) out.push({ channel: 'email', recipient: signer.email });
  if (phone && signer.notification.whatsapp) out.push({ channel: 'whatsapp', recipient: phone });
  if (out.length === 0 && phone) out.push({ channel: 'sms', recipient: phone });
  return out;
}

/** One-time codes prove the address itself: the email, or the mobile (by SMS, and WhatsApp when flagged). */
function codeAddressesOf(signer: Signer, channel: 'email' | 'mobile'): Address[] {
  if (channel === 'email') return signer.email ? [{ channel: 'email', recipient: signer.email }] : [];
  const phone = phoneOf(signer);
  if (!phone) return [];
  const sms: Address = { channel: 'sms', recipient: phone };
  return signer.notification.whatsapp ? [sms, { channel: 'whatsapp', recipient: phone }] : [sms];
}

/** E.164: the country code is stored without its `+`. */
function phoneOf(signer: Signer): string | undefined {
  return signer.mobile ? `+${signer.countryCode ?? ''}${signer.mobile}` : undefined;
}

const brandOf = (services: AppServices, session: EsignSession) =>
  brandingOf(session.emailTemplateOverrides, services.config.notifications.mailFrom.name);

async function draftFor(
  services: AppServices,
  session: EsignSession,
  signer: Signer,
  kind: NotificationKind,
  address: Address,
  message: RenderedMessage,
  extra: { notAfter?: Date; notBefore?: Date; otp?: { code: string; origin: string } } = {},
): Promise<NotificationDraft> {
  const base = { user: session.user, session, signer, kind, ...address, notAfter: extra.notAfter, notBefore: extra.notBefore };
  if (address.channel !== 'email') return { ...base, textBody: message.short };
  const brand = brandOf(services, session);
  return {
    ...base,
    subject: message.subject,
    textBody: message.text,
    htmlBody: message.html,
    mime: await composeMime({
      from: { name: brand.name, address: services.config.notifications.mailFrom.address },
      to: address.recipient,
      replyTo: brand.supportEmail,
      subject: message.subject,
      text: message.text,
      html: message.html,
      language: message.language,
      otp: extra.otp,
    }),
  };
}

/** The language a signer's messages are written in: theirs, else English. */
const languageOf = (signer: Signer) => languageOrFallback(signer.language);

/**
 * The signer's turn has come: queues their invite (when `notification.invite` is set) in `tx` and marks
 * them invited. Call it inside the transaction that passed the turn; delivery follows the commit.
 */
export async function queueInvite(
  services: AppServices,
  tx: EntityManager,
  session: EsignSession,
  signer: Signer,
  options: { byHand?: boolean; reminder?: boolean; notBefore?: Date } = {},
): Promise<string[]> {
  return queueNotifications(services, tx, await inviteDrafts(services, session, signer, options));
}

/** The invites of new sessions' first signers, queued together: one write per table however many sessions. */
export async function queueFirstInvites(
  services: AppServices,
  tx: EntityManager,
  invites: readonly { session: EsignSession; signer: Signer; notBefore?: Date }[],
): Promise<void> {
  const drafts = await Promise.all(
    invites.map(({ session, signer, notBefore }) => inviteDrafts(services, session, signer, { notBefore })),
  );
  await queueNotifications(services, tx, drafts.flat());
}

/** A signer's invite (or reminder) on each of their channels; marks the signer invited. */
async function inviteDrafts(
  services: AppServices,
  session: EsignSession,
  signer: Signer,
  options: { byHand?: boolean; reminder?: boolean; notBefore?: Date },
): Promise<NotificationDraft[]> {
  // An owner who resends by hand asks for it: the signer's `invite` flag is about the automatic one.
  if (!signer.notification.invite && !options.byHand) return [];
  // A reminder is the invite again, and says so first.
  const message = (options.reminder ? renderReminder : renderInvite)(
    brandOf(services, session),
    {
      signerName: signer.fullName,
      filename: session.filename,
      requester: session.sender ?? session.emailTemplateOverrides?.company_name ?? undefined,
      reason: signer.reason,
      inviteUrl: signerInviteUrl(services.config, signer),
      expiresAt: session.expiresAt,
    },
    languageOf(signer),
  );
  const drafts = await Promise.all(
    addressesOf(signer).map((address) =>
      draftFor(services, session, signer, options.reminder ? 'reminder' : 'invite', address, message, {
        notBefore: options.notBefore,
      }),
    ),
  );
  if (drafts.length > 0 && !options.reminder) signer.invitedAt = new Date();
  return drafts;
}

/**
 * The session has just completed with `finalPdf`: queues the completion message for every signer whose
 * `notification.completion` is set, with a signed link to the PDF (NOTIFY_LINK_TTL_SECONDS, 7 days by
 * default) when the session allows downloads.
 */
export async function queueCompletion(
  services: AppServices,
  tx: EntityManager,
  session: EsignSession,
  /** The envelope's documents, their current PDFs the final ones. */
  documents: EsignDocument[],
): Promise<string[]> {
  const signers = await tx.find(Signer, { session }, { orderBy: { position: 'asc' } });
  const brand = brandOf(services, session);
  const ttl = services.config.notifications.linkTtlSeconds;
  const finals = session.allowDownload
    ? await tx.find(StoredFile, { id: documents.map((document) => document.currentPdfFile.id) })
    : [];
  const downloads = session.allowDownload
    ? documents.map((document) => {
        const file = finals.find((final) => final.id === document.currentPdfFile.id)!;
        const issued = services.urls.issue(
          { key: file.storageKey, filename: signedName(document.name), contentType: 'application/pdf' },
          ttl,
        );
        return { name: document.name, url: issued.url };
      })
    : undefined;
  const drafts: NotificationDraft[] = [];
  for (const signer of signers.filter((s) => s.notification.completion)) {
    const message = renderCompletion(
      brand,
      {
        signerName: signer.fullName,
        filename: session.filename,
        downloads,
        linksExpireAt: downloads && new Date(Date.now() + ttl * 1000),
      },
      languageOf(signer),
    );
    for (const address of addressesOf(signer)) {
      drafts.push(await draftFor(services, session, signer, 'completion', address, message));
    }
  }
  return queueNotifications(services, tx, drafts);
}

/**
 * A signer declined: every other signer this service invited hears that the request has ended, in their language, on
 * the channels their invite used. Signers it never wrote to (their turn never came, or the integrator sends its own
 * invites) hear nothing from it. Queued in the decline's transaction.
 */
export async function queueRequestEnded(
  services: AppServices,
  tx: EntityManager,
  session: EsignSession,
  decliner: Signer,
): Promise<string[]> {
  const others = (await tx.find(Signer, { session }, { orderBy: { position: 'asc' } })).filter(
    (signer) => signer.id !== decliner.id && signer.invitedAt,
  );
  const brand = brandOf(services, session);
  const drafts: NotificationDraft[] = [];
  for (const signer of others) {
    const message = renderRequestEnded(
      brand,
      {
        signerName: signer.fullName,
        declinedBy: decliner.fullName,
        filename: session.filename,
        signed: signer.status === 'completed',
      },
      languageOf(signer),
    );
    for (const address of addressesOf(signer))
      drafts.push(await draftFor(services, session, signer, 'request_ended', address, message));
  }
  return queueNotifications(services, tx, drafts);
}

/**
 * For the signer checks: sends a one-time code. `email` goes to the signer's address; `mobile` goes by SMS,
 * and by WhatsApp as well when the signer's `notification.whatsapp` is set (either proves the number).
 * Call it in the transaction that stores the code's hash; nothing is sent if that rolls back. The code is
 * never logged; a code that expires before it could be delivered is not sent. Returns the notification ids.
 */
export async function queueOneTimeCode(
  services: AppServices,
  tx: EntityManager,
  input: { session: EsignSession; signer: Signer; channel: 'email' | 'mobile'; code: string; expiresAt: Date },
): Promise<string[]> {
  const { session, signer } = input;
  const addresses = codeAddressesOf(signer, input.channel);
  if (addresses.length === 0) throw new Error(`signer ${signer.id} has no ${input.channel} to send a code to`);
  const message = renderOneTimeCode(
    brandOf(services, session),
    {
      filename: session.filename,
      code: input.code,
      validMinutes: Math.max(1, Math.round((input.expiresAt.getTime() - Date.now()) / 60_000)),
    },
    languageOf(signer),
  );
  const kind: NotificationKind = input.channel === 'email' ? 'email_otp' : 'mobile_otp';
  const origin = new URL(services.config.publicUrl).origin;
  const drafts = await Promise.all(
    addresses.map((address) =>
      draftFor(services, session, signer, kind, address, message, {
        notAfter: input.expiresAt,
        otp: { code: input.code, origin },
      }),
    ),
  );
  return queueNotifications(services, tx, drafts);
}
