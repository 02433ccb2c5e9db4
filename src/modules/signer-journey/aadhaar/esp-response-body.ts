import type { Request } from 'express';
import { claimedTxn } from '../../signing';

/**
 * Where in the request an ESP put its `<EsignResp>`. ESPs differ: eSign 2.1 gateways send it through the signer's
 * browser as an auto-submitted form (application/x-www-form-urlencoded) whose field is `eSignResponse` (C-DAC,
 * eMudhra, the sandbox) or `msg` (NSDL's field name), the XML as is or its base64; eSign 3.x ESPs POST the XML
 * itself (application/xml or text/xml). Anything else is refused with a reason that names what was missing; the
 * transaction it names, if any (an `aspTxnID`/`txn` field, a `txnref`, or the `txn` of XML sent under another
 * field name or Content-Type), gets the refusal in its audit trail.
 */
export const ESP_RESPONSE_FIELDS = ['eSignResponse', 'msg'] as const;
export const ESP_RESPONSE_XML_TYPES = ['application/xml', 'text/xml'];

export type EspResponseBody =
  { via: 'form' | 'xml'; xml: string } | { via: 'form' | 'xml' | 'other'; refused: string; txn: string | null };

export function espResponseBody(req: Request): EspResponseBody {
  if (req.is('application/x-www-form-urlencoded')) {
    const fields = (req.body ?? {}) as Record<string, unknown>;
    const name = ESP_RESPONSE_FIELDS.find((field) => typeof fields[field] === 'string' && fields[field].trim() !== '');
    if (!name) {
      const sent = Object.keys(fields).filter((field) => /^[\w.-]{1,40}$/.test(field));
      return {
        via: 'form',
        refused: `the form carries no eSign response: it has no eSignResponse or msg field (fields sent: ${sent.join(', ') || 'none'})`,
        txn: txnNamedBy(fields),
      };
    }
    const xml = fieldXml(fields[name] as string);
    if (xml === null)
      return { via: 'form', refused: `the ${name} field holds neither XML nor base64 of XML`, txn: txnNamedBy(fields) };
    return { via: 'form', xml };
  }
  if (req.is(ESP_RESPONSE_XML_TYPES)) {
    const text = typeof req.body === 'string' ? req.body.replace(/^\uFEFF/, '').trim() : '';
    if (!text) return { via: 'xml', refused: 'the XML body is empty: no EsignResp was sent', txn: null };
    if (!text.startsWith('<')) return { via: 'xml', refused: 'the body is not XML: no EsignResp was sent', txn: null };
    return { via: 'xml', xml: text };
  }
  const type = /^[\w.+/-]{1,100}/.exec(req.headers['content-type'] ?? '')?.[0];
  const sent = typeof req.body === 'string' ? fieldXml(req.body) : null;
  return {
    via: 'other',
    refused: `no eSign response: expected a form (application/x-www-form-urlencoded) with an eSignResponse or msg field, or the XML itself as application/xml or text/xml, but got ${type ? `Content-Type ${type}` : 'no Content-Type'}`,
    txn: sent ? claimedTxn(sent) : null,
  };
}

/** The response as posted in a form field: the XML itself, or (as some ESPs send it) its base64; null otherwise. */
function fieldXml(value: string): string | null {
  const trimmed = value.replace(/^\uFEFF/, '').trim();
  if (trimmed.startsWith('<')) return trimmed;
  const compact = trimmed.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return null;
  const decoded = Buffer.from(compact, 'base64')
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trim();
  return decoded.startsWith('<') ? decoded : null;
}

/** The transaction a refused form names, read without trusting it: only to file the refusal in its audit trail. */
function txnNamedBy(fields: Record<string, unknown>): string | null {
  const plain = (value: unknown) => (typeof value === 'string' && /^[!#-&(-~]{1,100}$/.test(value) ? value : null);
  const named = plain(fields.aspTxnID) ?? plain(fields.txn);
  if (named) return named;
  if (typeof fields.txnref === 'string') {
    const [txn] = Buffer.from(fields.txnref, 'base64').toString('utf8').split('|');
    if (plain(txn)) return txn!;
  }
  for (const value of Object.values(fields)) {
    if (typeof value !== 'string') continue;
    const xml = fieldXml(value);
    const txn = xml ? claimedTxn(xml) : null;
    if (txn) return txn;
  }
  return null;
}
