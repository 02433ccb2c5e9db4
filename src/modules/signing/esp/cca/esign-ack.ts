/**
 * eSign 3.x's acknowledgement: the ESP's immediate answer to the request the ASP's server POSTed to it, before the
 * signer has done anything. The same `<EsignResp>` element as the final response, signed the same way, but:
 *   <EsignResp ver="3.2" status="2" ts txn resCode errCode="" errMsg=""/>   accepted: the signer may now be sent to
 *                                                                          the ESP's page with txnref
 *   <EsignResp ver="3.2" status="0" ts txn resCode errCode errMsg/>          refused: nothing will follow
 * (eMudhra's 3.x SDK reads `errorCode`/`errorMessage` on the acknowledgement, C-DAC's `errCode`/`errMsg`: both are
 * read.) `txnref` = base64 of `<txn>|<resCode>`, what the ESP's authentication page is given to find the request.
 */
import { DOMImplementation } from '@xmldom/xmldom';
import {
  attributeReader,
  formatEsignTimestamp,
  invalid,
  parseEsignTimestamp,
  tokenField,
  type EsignVersion,
} from './esign-request';
import { serializeXml, signEnveloped, verifyEnveloped, type XmlSigner } from './xml-dsig';

export type EsignAcknowledgementInput = {
  version: EsignVersion;
  txn: string;
  resCode: string;
  ts?: Date;
  signer: XmlSigner;
} & ({ status: 'accepted' } | { status: 'refused'; errCode: string; errMsg: string });

export type ParsedEsignAcknowledgement = { txn: string; ts: Date; resCode: string } & (
  { status: '2' } | { status: '0'; errCode: string; errMsg: string }
);

/** The signed acknowledgement XML (UTF-8 text with its XML declaration). */
export function buildEsignAcknowledgement(input: EsignAcknowledgementInput): string {
  const doc = new DOMImplementation().createDocument(null, 'EsignResp', null);
  const ack = doc.documentElement!;
  ack.setAttribute('ver', input.version);
  ack.setAttribute('status', input.status === 'accepted' ? '2' : '0');
  ack.setAttribute('ts', formatEsignTimestamp(input.ts ?? new Date()));
  ack.setAttribute('txn', input.txn);
  ack.setAttribute('resCode', input.resCode);
  ack.setAttribute('errCode', input.status === 'refused' ? input.errCode : '');
  ack.setAttribute('errMsg', input.status === 'refused' ? input.errMsg : '');
  return `<?xml version="1.0" encoding="UTF-8"?>${signEnveloped(serializeXml(ack), input.signer)}`;
}

/**
 * The ASP's side: the acknowledgement's signature checked against the configured ESP certificate (EsignXmlError
 * when it does not hold), and what it says. An accepted one must carry a resCode; a final response (status "1")
 * is not an acknowledgement.
 */
export function parseAndVerifyEsignAcknowledgement(xml: string, espCertificatePem: string): ParsedEsignAcknowledgement {
  const ack = verifyEnveloped(xml, espCertificatePem, 'EsignResp');
  const read = attributeReader(ack);
  const status = read('status');
  const txn = tokenField(read('txn'), 'txn');
  const ts = parseEsignTimestamp(read('ts'));
  if (status === '2') return { status, txn, ts, resCode: tokenField(read('resCode', ''), 'resCode') };
  if (status === '0') {
    const errCode = read('errCode', '') || read('errorCode', '');
    const errMsg = read('errMsg', '') || read('errorMessage', '');
    return { status, txn, ts, resCode: read('resCode', ''), errCode, errMsg };
  }
  throw invalid(`an acknowledgement's status is "2" (accepted) or "0" (refused), not "${status}"`);
}

/** What the ESP's authentication page is given: base64 of `<txn>|<resCode>`. */
export function esignTxnRef(txn: string, resCode: string): string {
  return Buffer.from(`${txn}|${resCode}`, 'utf8').toString('base64');
}

/** A txnref read back: null unless it is base64 of `<txn>|<resCode>` with both tokens. */
export function readEsignTxnRef(value: unknown): { txn: string; resCode: string } | null {
  if (typeof value !== 'string' || value.length > 400) return null;
  const compact = value.trim().replace(/ /g, '+');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return null;
  const [txn, resCode, ...rest] = Buffer.from(compact, 'base64').toString('utf8').split('|');
  const token = /^[!#-&(-~]{1,100}$/;
  if (rest.length > 0 || !txn || !resCode || !token.test(txn) || !token.test(resCode)) return null;
  return { txn, resCode };
}
