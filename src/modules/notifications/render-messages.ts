import { escapeHtml } from '../../platform/http/escape-html';
import { FALLBACK_LANGUAGE, type Language } from '../../platform/i18n';
import { SMALL, button, htmlDocument, link, p } from './message-html';
import { wordingIn, type Wording } from './messages';

/** What a session may say of its sender instead of the platform (the contract's `email_template`). */
export interface BrandingOverrides {
  company_name?: string | null;
  legal_name?: string | null;
  support_email?: string | null;
}

/** Who a message says it comes from. With `company_name` the platform's own name appears nowhere. */
export interface Branding {
  name: string;
  legalName?: string;
  supportEmail?: string;
  /** True when `company_name` replaced the platform's branding. */
  custom: boolean;
}

/**
 * One message in every form a channel needs: email (subject, text, HTML) and SMS / WhatsApp (short), all in
 * `language` (the signer's, else English; a key its catalog lacks is English).
 */
export interface RenderedMessage {
  language: Language;
  subject: string;
  text: string;
  html: string;
  short: string;
}

export function brandingOf(overrides: BrandingOverrides | null | undefined, platformName: string): Branding {
  const company = overrides?.company_name?.trim();
  return {
    name: company || platformName,
    legalName: overrides?.legal_name?.trim() || undefined,
    supportEmail: overrides?.support_email?.trim() || undefined,
    custom: !!company,
  };
}

export interface InviteContent {
  signerName: string;
  filename: string;
  /** The session's `sender`, else the company name; none: the message asks in no one's name. */
  requester?: string;
  reason?: string;
  inviteUrl: string;
  expiresAt: Date;
}

/** The signer's turn has come: what to sign, who asks, the link and how long it works. */
export function renderInvite(brand: Branding, content: InviteContent, language: Language = FALLBACK_LANGUAGE): RenderedMessage {
  return inviteMessage(wordingIn(language), brand, content, 'invite');
}

/** A reminder is the invite again, and says so first (subject and short form). */
export function renderReminder(brand: Branding, content: InviteContent, language: Language = FALLBACK_LANGUAGE): RenderedMessage {
  return inviteMessage(wordingIn(language), brand, content, 'reminder');
}

function inviteMessage(w: Wording, brand: Branding, content: InviteContent, kind: 'invite' | 'reminder'): RenderedMessage {
  const values = {
    who: content.requester ? 'named' : 'none',
    requester: content.requester ?? '',
    filename: content.filename,
    brand: brand.name,
    url: content.inviteUrl,
    expires: content.expiresAt,
  };
  const hello = { name: content.signerName };
  const reason = content.reason ? { reason: content.reason } : undefined;
  return {
    language: w.language,
    subject: w.text(`${kind}.subject`, values),
    text: textOf(w, brand, [
      w.text('common.hello', hello),
      w.text('invite.asks', values) + (reason ? `\n${w.text('invite.reason', reason)}` : ''),
      w.text('invite.sign_here', values),
      w.text('invite.until', values),
    ]),
    html: htmlOf(w, brand, [
      p(w.html('common.hello', hello)),
      p(w.html('invite.asks', values) + (reason ? `<br>${w.html('invite.reason', reason)}` : '')),
      button(content.inviteUrl, w.text('invite.button')),
      p(w.html('common.open_link', {}, { url: link(content.inviteUrl) })),
      p(w.html('invite.until', values), SMALL),
    ]),
    short: w.text(`${kind}.short`, values),
  };
}

export interface CompletionContent {
  signerName: string;
  filename: string;
  /** Each signed PDF of the envelope, in order; absent when the session does not allow downloads. */
  downloads?: { name: string; url: string }[];
  /** When the download links stop working. */
  linksExpireAt?: Date;
}

/** Everyone has signed: the signed PDFs' links, or who keeps the document when there are none. */
export function renderCompletion(
  brand: Branding,
  content: CompletionContent,
  language: Language = FALLBACK_LANGUAGE,
): RenderedMessage {
  const w = wordingIn(language);
  const downloads = content.downloads ?? [];
  const several = downloads.length > 1;
  const values = { filename: content.filename, brand: brand.name, others: several ? downloads.length - 1 : 0 };
  const hello = { name: content.signerName };
  const until = content.linksExpireAt && { links: downloads.length, expires: content.linksExpireAt };
  const untilText = until ? w.text('completion.until', until) : '';
  const untilHtml = until ? w.html('completion.until', until) : '';
  const urls = downloads.map((download) => download.url);
  return {
    language,
    subject: w.text('completion.subject', values),
    text: textOf(w, brand, [
      w.text('common.hello', hello),
      w.text('completion.done', values),
      downloads.length === 0
        ? w.text('completion.keeps')
        : several
          ? [
              w.text('completion.download_many'),
              ...downloads.map((download) => w.text('completion.download_line', { name: download.name, url: download.url })),
              untilText,
            ].join('\n')
          : `${w.text('completion.download_one', { url: urls[0]! })}\n${untilText}`,
    ]),
    html: htmlOf(w, brand, [
      p(w.html('common.hello', hello)),
      p(w.html('completion.done', values)),
      ...(downloads.length === 0
        ? [p(w.html('completion.keeps'))]
        : several
          ? [
              ...downloads.map((download) =>
                p(w.html('completion.download_line', { name: download.name }, { url: link(download.url) })),
              ),
              p(untilHtml, SMALL),
            ]
          : [
              button(urls[0]!, w.text('completion.button')),
              p(w.html('common.open_link', {}, { url: link(urls[0]!) })),
              p(untilHtml, SMALL),
            ]),
    ]),
    short:
      downloads.length === 0
        ? w.text('completion.short', values)
        : w.text('completion.short_download', { ...values, urls: urls.join(' ') }),
  };
}

export interface OneTimeCodeContent {
  filename: string;
  code: string;
  validMinutes: number;
}

/** A signer check's one-time code: the code, how long it is valid, and that nobody will ask for it. */
export function renderOneTimeCode(
  brand: Branding,
  content: OneTimeCodeContent,
  language: Language = FALLBACK_LANGUAGE,
): RenderedMessage {
  const w = wordingIn(language);
  const values = { filename: content.filename, brand: brand.name, code: content.code, minutes: content.validMinutes };
  const bold = `<strong style="font-size:22px;letter-spacing:3px">${escapeHtml(content.code)}</strong>`;
  return {
    language,
    // The code stays out of the subject: subjects show on lock screens and in mail listings.
    subject: w.text('one_time_code.subject', values),
    text: textOf(w, brand, [
      w.text('one_time_code.code', values),
      w.text('one_time_code.why', values),
      w.text('one_time_code.ignore'),
    ]),
    html: htmlOf(w, brand, [
      p(w.html('one_time_code.code', values, { code: bold })),
      p(w.html('one_time_code.why', values)),
      p(w.html('one_time_code.ignore'), SMALL),
    ]),
    short: w.text('one_time_code.short', values),
  };
}

export interface DeclineNoticeContent {
  signerName: string;
  filename: string;
  sessionId: string;
  reason: string;
}

/**
 * The owner's email when a signer declines (plain text). In English: the owner has no language of their own (the
 * API speaks English); the catalogs carry it in every language for when they do.
 */
export function renderDeclineNotice(
  content: DeclineNoticeContent,
  language: Language = FALLBACK_LANGUAGE,
): { language: Language; subject: string; text: string } {
  const w = wordingIn(language);
  const values = { signer: content.signerName, filename: content.filename, session: content.sessionId };
  return {
    language,
    subject: w.text('decline_notice.subject', values),
    text: [
      w.text('decline_notice.declined', values),
      w.text('decline_notice.reason', { reason: content.reason }),
      w.text('decline_notice.ended'),
    ].join('\n\n'),
  };
}

export interface RequestEndedContent {
  signerName: string;
  /** Who declined. */
  declinedBy: string;
  filename: string;
  /** Whether this signer had signed already. */
  signed: boolean;
}

/**
 * To the other signers a declined session had asked, in their language: who declined and that the request has ended
 * (the decliner's reason is not theirs to read: the owner's notice has it).
 */
export function renderRequestEnded(
  brand: Branding,
  content: RequestEndedContent,
  language: Language = FALLBACK_LANGUAGE,
): RenderedMessage {
  const w = wordingIn(language);
  const values = { signer: content.declinedBy, filename: content.filename, brand: brand.name };
  const you = { signed: content.signed ? 'yes' : 'no' };
  const hello = { name: content.signerName };
  return {
    language,
    subject: w.text('request_ended.subject', values),
    text: textOf(w, brand, [
      w.text('common.hello', hello),
      w.text('request_ended.declined', values),
      w.text('request_ended.you', you),
    ]),
    html: htmlOf(w, brand, [
      p(w.html('common.hello', hello)),
      p(w.html('request_ended.declined', values)),
      p(w.html('request_ended.you', you)),
    ]),
    short: w.text('request_ended.short', values),
  };
}

/** The footer's lines, as text and as HTML: who sent it (the company alone when it replaced the platform), whom to ask. */
function footerOf(w: Wording, brand: Branding): { text: string[]; html: string[] } {
  const text: string[] = [];
  const html: string[] = [];
  if (brand.custom) {
    text.push(brand.legalName ?? brand.name);
    html.push(escapeHtml(brand.legalName ?? brand.name));
  } else {
    text.push(w.text('common.sent_by', { brand: brand.name }));
    html.push(w.html('common.sent_by', { brand: brand.name }));
    if (brand.legalName) {
      text.push(brand.legalName);
      html.push(escapeHtml(brand.legalName));
    }
  }
  if (brand.supportEmail) {
    const email = escapeHtml(brand.supportEmail);
    text.push(w.text('common.questions', { email: brand.supportEmail }));
    html.push(w.html('common.questions', {}, { email: `<a href="mailto:${email}">${email}</a>` }));
  }
  return { text, html };
}

function textOf(w: Wording, brand: Branding, paragraphs: string[]): string {
  return `${paragraphs.join('\n\n')}\n\n-- \n${footerOf(w, brand).text.join('\n')}\n`;
}

function htmlOf(w: Wording, brand: Branding, blocks: string[]): string {
  return htmlDocument(w.language, brand.name, blocks, footerOf(w, brand).html);
}
