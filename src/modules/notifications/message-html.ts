import { escapeHtml } from '../../platform/http/escape-html';

/** The smaller, grey paragraph of a message (how long a link works, what to do if it was not asked for). */
export const SMALL = 'color:#555;font-size:13px';

/** A whole email's HTML: the sender's name on top, the blocks, the footer lines below a rule. */
export function htmlDocument(language: string, sender: string, blocks: string[], footer: string[]): string {
  return [
    '<!doctype html>',
    `<html lang="${escapeHtml(language)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>`,
    '<body style="margin:0;padding:24px;background:#f4f5f7;font-family:Arial,Helvetica,sans-serif;color:#1f2328">',
    '<div style="max-width:560px;margin:0 auto;background:#fff;border-radius:8px;padding:24px">',
    `<div style="font-size:18px;font-weight:bold;margin-bottom:16px">${escapeHtml(sender)}</div>`,
    ...blocks,
    `<hr style="border:0;border-top:1px solid #ddd;margin:24px 0 12px"><div style="color:#666;font-size:12px">${footer.join('<br>')}</div>`,
    '</div></body></html>',
  ].join('\n');
}

/** A paragraph of HTML already escaped. */
export function p(html: string, style = ''): string {
  return `<p style="margin:0 0 14px;line-height:1.5;${style}">${html}</p>`;
}

/** A link drawn as a button; `label` is plain text. */
export function button(url: string, label: string): string {
  return p(
    `<a href="${escapeHtml(url)}" style="display:inline-block;background:#1f6feb;color:#fff;padding:10px 18px;border-radius:6px;text-decoration:none">${escapeHtml(label)}</a>`,
  );
}

/** A URL written out as its own link. */
export function link(url: string): string {
  return `<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`;
}
