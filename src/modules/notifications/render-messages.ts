import { escapeHtml } from '../../platform/http/escape-html';

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

/** One message in every form a channel needs: email (subject, text, HTML) and SMS / WhatsApp (short). */
export interface RenderedMessage {
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

export function renderInvite(brand: Branding, content: InviteContent): RenderedMessage {
  const doc = `“${content.filename}”`;
  const asks = content.requester ? `${content.requester} asks you to sign ${doc}.` : `You are asked to sign ${doc}.`;
  const until = `The link works until ${formatUtc(content.expiresAt)}.`;
  return {
    subject: content.requester ? `${content.requester} asks you to sign ${doc}` : `Please sign ${doc}`,
    text: textOf(brand, [
      `Hello ${content.signerName},`,
      asks + (content.reason ? `\nReason: ${content.reason}` : ''),
      `Open the document and sign it here:\n${content.inviteUrl}`,
      `${until} It is yours alone: do not forward this message.`,
    ]),
    html: htmlOf(brand, [
      p(`Hello ${escapeHtml(content.signerName)},`),
      p(escapeHtml(asks) + (content.reason ? `<br>Reason: ${escapeHtml(content.reason)}` : '')),
      button(content.inviteUrl, 'Review and sign'),
      p(`Or open this link: ${link(content.inviteUrl)}`),
      p(`${escapeHtml(until)} It is yours alone: do not forward this message.`, 'color:#555;font-size:13px'),
    ]),
    short: `${content.requester ? '' : `${brand.name}: `}${asks} Sign here: ${content.inviteUrl} (until ${formatUtc(content.expiresAt)})`,
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

export function renderCompletion(brand: Branding, content: CompletionContent): RenderedMessage {
  const doc = `“${content.filename}”`;
  const downloads = content.downloads ?? [];
  const several = downloads.length > 1;
  const done = several
    ? `Everyone has signed ${doc} and the ${downloads.length - 1} other documents with it.`
    : `Everyone has signed ${doc}.`;
  const until = content.linksExpireAt
    ? `The link${several ? 's work' : ' works'} until ${formatUtc(content.linksExpireAt)}.`
    : '';
  const keeps = 'The sender keeps the signed document; ask them for a copy.';
  return {
    subject: `${doc} is signed`,
    text: textOf(brand, [
      `Hello ${content.signerName},`,
      done,
      downloads.length === 0
        ? keeps
        : several
          ? `Download the signed documents:\n${downloads.map((download) => `${download.name}: ${download.url}`).join('\n')}\n${until}`
          : `Download the signed document:\n${downloads[0]!.url}\n${until}`,
    ]),
    html: htmlOf(brand, [
      p(`Hello ${escapeHtml(content.signerName)},`),
      p(escapeHtml(done)),
      ...(downloads.length === 0
        ? [p(keeps)]
        : several
          ? [
              ...downloads.map((download) => p(`${escapeHtml(download.name)}: ${link(download.url)}`)),
              p(escapeHtml(until), 'color:#555;font-size:13px'),
            ]
          : [
              button(downloads[0]!.url, 'Download the signed PDF'),
              p(`Or open this link: ${link(downloads[0]!.url)}`),
              p(escapeHtml(until), 'color:#555;font-size:13px'),
            ]),
    ]),
    short:
      downloads.length === 0
        ? `${brand.name}: ${done}`
        : `${brand.name}: ${done} Download: ${downloads.map((download) => download.url).join(' ')}`,
  };
}

export interface OneTimeCodeContent {
  filename: string;
  code: string;
  validMinutes: number;
}

export function renderOneTimeCode(brand: Branding, content: OneTimeCodeContent): RenderedMessage {
  const line = `Your code is ${content.code}, valid ${content.validMinutes} minute${content.validMinutes === 1 ? '' : 's'}.`;
  const why = `It confirms that it is you who signs “${content.filename}”. Nobody from ${brand.name} will ask you for it.`;
  return {
    // The code stays out of the subject: subjects show on lock screens and in mail listings.
    subject: `Your verification code for “${content.filename}”`,
    text: textOf(brand, [line, why, 'If you did not ask for a code, ignore this message.']),
    html: htmlOf(brand, [
      p(
        `Your code is <strong style="font-size:22px;letter-spacing:3px">${escapeHtml(content.code)}</strong>, valid ${content.validMinutes} minute${content.validMinutes === 1 ? '' : 's'}.`,
      ),
      p(escapeHtml(why)),
      p('If you did not ask for a code, ignore this message.', 'color:#555;font-size:13px'),
    ]),
    short: `${brand.name}: ${line}`,
  };
}

/** `2026-11-22 14:05 UTC`: unambiguous for a reader in any time zone. */
export function formatUtc(date: Date): string {
  return `${date.toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

function footerLines(brand: Branding): string[] {
  const lines = brand.custom
    ? [brand.legalName ?? brand.name]
    : [`Sent by ${brand.name}`, ...(brand.legalName ? [brand.legalName] : [])];
  if (brand.supportEmail) lines.push(`Questions? Write to ${brand.supportEmail}`);
  return lines;
}

function textOf(brand: Branding, paragraphs: string[]): string {
  return `${paragraphs.join('\n\n')}\n\n-- \n${footerLines(brand).join('\n')}\n`;
}

function htmlOf(brand: Branding, blocks: string[]): string {
  const footer = footerLines(brand)
    .map((line) =>
      brand.supportEmail && line.endsWith(brand.supportEmail)
        ? `${escapeHtml(line.slice(0, -brand.supportEmail.length))}<a href="mailto:${escapeHtml(brand.supportEmail)}">${escapeHtml(brand.supportEmail)}</a>`
        : escapeHtml(line),
    )
    .join('<br>');
  return [
    '<!doctype html>',
    '<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>',
    '<body style="margin:0;padding:24px;background:#f4f5f7;font-family:Arial,Helvetica,sans-serif;color:#1f2328">',
    '<div style="max-width:560px;margin:0 auto;background:#fff;border-radius:8px;padding:24px">',
    `<div style="font-size:18px;font-weight:bold;margin-bottom:16px">${escapeHtml(brand.name)}</div>`,
    ...blocks,
    `<hr style="border:0;border-top:1px solid #ddd;margin:24px 0 12px"><div style="color:#666;font-size:12px">${footer}</div>`,
    '</div></body></html>',
  ].join('\n');
}

function p(html: string, style = ''): string {
  return `<p style="margin:0 0 14px;line-height:1.5;${style}">${html}</p>`;
}

function button(url: string, label: string): string {
  return p(
    `<a href="${escapeHtml(url)}" style="display:inline-block;background:#1f6feb;color:#fff;padding:10px 18px;border-radius:6px;text-decoration:none">${escapeHtml(label)}</a>`,
  );
}

function link(url: string): string {
  return `<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`;
}
