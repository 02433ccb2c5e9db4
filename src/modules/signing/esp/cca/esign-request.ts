/**
 * The ASP's `<Esign>` request of the CCA eSign API, versions 2.1 and 3.2 (eSign API Specifications, Controller of
 * Certifying Authorities: v2.1 and v3.2, section 3.3.1 "eSign XML structure").
 *
 * 2.1 (the ESP collects the Aadhaar number and authenticates on its own pages):
 *   <Esign ver="2.1" sc="Y" ts txn ekycId="" ekycIdType="A" aspId AuthMode responseSigType="pkcs7" responseUrl>
 *     <Docs><InputHash id hashAlgorithm="SHA256" docInfo>hex</InputHash></Docs>
 *     <Signature>ASP's enveloped XML-DSig</Signature>
 *   </Esign>
 * 3.2 (the signer's account at the ESP; response sent server to server, the signer redirected back):
 *   <Esign ver="3.2" signerid? ts txn maxWaitPeriod aspId responseUrl redirectUrl signingAlgorithm="RSA">
 *     <Docs><InputHash id hashAlgorithm="SHA256" docInfo docUrl responseSigType="pkcs7">hex</InputHash></Docs>
 *     <Signature/>
 *   </Esign>
 * 3.2 has no sc, ekycIdType or AuthMode (the ESP chooses how to authenticate its account holder), and moves
 * responseSigType to each InputHash.
 */
import { X509Certificate } from 'node:crypto';
import { DOMImplementation, type Element } from '@xmldom/xmldom';
import { EsignXmlError, serializeXml, signEnveloped, verifyEnveloped, type XmlSigner } from './xml-dsig';

export type EsignVersion = '2.1' | '3.2';
export const ESIGN_VERSIONS: readonly EsignVersion[] = ['2.1', '3.2'];

/** AuthMode of v2.1: 1 OTP, 2 biometric (fingerprint), 3 iris. */
export type EsignAuthMode = 1 | 2 | 3;

export interface EsignDocumentHash {
  /** The InputHash id, echoed by the DocSignature that signs it. */
  id: string;
  /** SHA-256 of the document (for a PDF: of its signature's byte range), 64 hex digits. */
  sha256Hex: string;
  /** Shown to the signer by the ESP. */
  docInfo: string;
  /** 3.2 only: where the signer may read the document. */
  docUrl?: string;
}

export interface EsignRequestInput {
  version: EsignVersion;
  /** The ASP's transaction id: unique, stored, echoed in the response. */
  txn: string;
  aspId: string;
  /** 2.1: where the ESP sends the signer's browser with the response. 3.2: where the ESP POSTs the response. */
  responseUrl: string;
  documents: EsignDocumentHash[];
  /** 2.1 only (default 1, OTP). */
  authMode?: 1 | 2;
  /** 3.2 only, required there: where the ESP sends the signer back. */
  redirectUrl?: string;
  /** 3.2 only: minutes the ESP may take to complete (default 1440). */
  maxWaitPeriod?: number;
  /** 3.2 only: the signer's id at the ESP, when the ASP knows it. */
  signerId?: string;
  /** Default now. */
  ts?: Date;
  /** The ASP's key and certificate. */
  signer: XmlSigner;
}

export interface ParsedEsignRequest {
  ver: EsignVersion;
  ts: Date;
  txn: string;
  aspId: string;
  responseUrl: string;
  /** 2.1 only. */
  authMode: EsignAuthMode | null;
  /** 3.2 only. */
  redirectUrl: string | null;
  maxWaitPeriod: number | null;
  signerId: string | null;
  documents: EsignDocumentHash[];
}

/** IDs and the transaction are printable ASCII without spaces or quotes, at most 100 characters. */
const TOKEN = /^[!#-&(-~]{1,100}$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
/** The spec allows several documents per request; ESPs cap it (5 is the usual limit). */
export const MAX_INPUT_HASHES = 5;
const DEFAULT_MAX_WAIT_MINUTES = 1440;

/** The signed `<Esign>` request XML (UTF-8 text with its XML declaration). */
export function buildEsignRequest(input: EsignRequestInput): string {
  const { version } = input;
  if (!ESIGN_VERSIONS.includes(version)) throw new RangeError(`unsupported eSign version ${String(version)}`);
  checkToken(input.txn, 'txn');
  checkToken(input.aspId, 'aspId');
  checkUrl(input.responseUrl, 'responseUrl');
  if (input.documents.length < 1 || input.documents.length > MAX_INPUT_HASHES) {
    throw new RangeError(`between 1 and ${MAX_INPUT_HASHES} documents`);
  }
  const doc = new DOMImplementation().createDocument(null, 'Esign', null);
  const esign = doc.documentElement!;
  const ts = formatEsignTimestamp(input.ts ?? new Date());
  const attributes: [string, string][] =
    version === '2.1'
      ? [
          ['ver', version],
          ['sc', 'Y'], // the signer's consent, given on the ASP's page before the request is sent
          ['ts', ts],
          ['txn', input.txn],
          ['ekycId', ''], // empty: the ESP asks the signer for the Aadhaar number on its own page
          ['ekycIdType', 'A'],
          ['aspId', input.aspId],
          ['AuthMode', String(input.authMode ?? 1)],
          ['responseSigType', 'pkcs7'],
          ['responseUrl', input.responseUrl],
        ]
      : [
          ['ver', version],
          ...(input.signerId !== undefined ? [['signerid', checkToken(input.signerId, 'signerId')] as [string, string]] : []),
          ['ts', ts],
          ['txn', input.txn],
          ['maxWaitPeriod', String(checkMaxWait(input.maxWaitPeriod ?? DEFAULT_MAX_WAIT_MINUTES))],
          ['aspId', input.aspId],
          ['responseUrl', input.responseUrl],
          ['redirectUrl', checkUrl(input.redirectUrl, 'redirectUrl')],
          ['signingAlgorithm', 'RSA'],
        ];
  if (version === '2.1' && input.authMode !== undefined && input.authMode !== 1 && input.authMode !== 2) {
    throw new RangeError('authMode must be 1 (OTP) or 2 (biometric)');
  }
  for (const [name, value] of attributes) esign.setAttribute(name, value);

  const docs = doc.createElement('Docs');
  esign.appendChild(docs);
  for (const document of input.documents) {
    checkToken(document.id, 'documents[].id');
    if (!SHA256_HEX.test(document.sha256Hex)) throw new RangeError('documents[].sha256Hex must be 64 hex digits');
    const inputHash = doc.createElement('InputHash');
    docs.appendChild(inputHash);
    inputHash.setAttribute('id', document.id);
    inputHash.setAttribute('hashAlgorithm', 'SHA256');
    // Line breaks would become CRLF in the browser's form post and no longer match the signed value.
    inputHash.setAttribute('docInfo', document.docInfo.replace(/[\r\n\t]+/g, ' '));
    if (version === '3.2') {
      inputHash.setAttribute('docUrl', document.docUrl === undefined ? '' : checkUrl(document.docUrl, 'docUrl'));
      inputHash.setAttribute('responseSigType', 'pkcs7');
    }
    inputHash.appendChild(doc.createTextNode(document.sha256Hex.toLowerCase()));
  }
  return `<?xml version="1.0" encoding="UTF-8"?>${signEnveloped(serializeXml(esign), input.signer)}`;
}

/**
 * The gateway's side: checks the request's signature against the ASP's certificate and answers what it asks.
 * Refuses with `EsignXmlError` only (a bad signature, bad XML, a missing or invalid field); `ts` freshness is the
 * caller's to judge.
 */
export function parseAndVerifyEsignRequest(xml: string, aspCertificatePem: string): ParsedEsignRequest {
  checkCertificate(aspCertificatePem);
  const esign = verifyEnveloped(xml, aspCertificatePem, 'Esign');
  const read = attributeReader(esign);
  const ver = read('ver');
  if (ver !== '2.1' && ver !== '3.2') throw invalid(`unsupported eSign version "${ver}"`);
  const common = {
    ver: ver as EsignVersion,
    ts: parseEsignTimestamp(read('ts')),
    txn: tokenField(read('txn'), 'txn'),
    aspId: tokenField(read('aspId'), 'aspId'),
    responseUrl: urlField(read('responseUrl'), 'responseUrl'),
  };
  let versionFields: Pick<ParsedEsignRequest, 'authMode' | 'redirectUrl' | 'maxWaitPeriod' | 'signerId'>;
  if (ver === '2.1') {
    if (read('sc') !== 'Y' && read('sc') !== 'y') throw invalid('sc must be "Y" (the signer consented)');
    if (read('ekycIdType') !== 'A') throw invalid('ekycIdType must be "A" (Aadhaar)');
    if (read('responseSigType') !== 'pkcs7') throw invalid('responseSigType must be "pkcs7"');
    const authMode = read('AuthMode');
    if (authMode !== '1' && authMode !== '2' && authMode !== '3') throw invalid('AuthMode must be 1, 2 or 3');
    versionFields = { authMode: Number(authMode) as EsignAuthMode, redirectUrl: null, maxWaitPeriod: null, signerId: null };
  } else {
    const maxWait = read('maxWaitPeriod');
    if (!/^[0-9]{1,6}$/.test(maxWait)) throw invalid('maxWaitPeriod must be a number of minutes');
    if (read('signingAlgorithm', 'RSA') !== 'RSA') throw invalid('signingAlgorithm must be "RSA" (the only one supported)');
    const signerId = esign.hasAttribute('signerid') ? tokenField(read('signerid'), 'signerid') : null;
    versionFields = {
      authMode: null,
      redirectUrl: urlField(read('redirectUrl'), 'redirectUrl'),
      maxWaitPeriod: Number(maxWait),
      signerId,
    };
  }
  return { ...common, ...versionFields, documents: readInputHashes(esign, ver) };
}

function readInputHashes(esign: Element, ver: EsignVersion): EsignDocumentHash[] {
  const docs = childElements(esign, 'Docs');
  if (docs.length !== 1) throw invalid('exactly one <Docs>');
  const hashes = childElements(docs[0]!, 'InputHash');
  if (hashes.length < 1 || hashes.length > MAX_INPUT_HASHES) throw invalid(`between 1 and ${MAX_INPUT_HASHES} <InputHash>`);
  const ids = new Set<string>();
  return hashes.map((inputHash) => {
    const read = attributeReader(inputHash);
    const id = tokenField(read('id'), 'InputHash id');
    if (ids.has(id)) throw invalid(`InputHash id "${id}" is repeated`);
    ids.add(id);
    if (read('hashAlgorithm').toUpperCase() !== 'SHA256') throw invalid('hashAlgorithm must be SHA256');
    if (ver === '3.2' && read('responseSigType', 'pkcs7') !== 'pkcs7') throw invalid('responseSigType must be "pkcs7"');
    const hex = (inputHash.textContent ?? '').trim();
    if (!SHA256_HEX.test(hex)) throw invalid('an InputHash must hold 64 hex digits (SHA-256)');
    const docUrl = ver === '3.2' ? read('docUrl', '') : '';
    return {
      id,
      sha256Hex: hex.toLowerCase(),
      docInfo: read('docInfo', ''),
      ...(docUrl ? { docUrl: urlField(docUrl, 'docUrl') } : {}),
    };
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Shared with the response

/** Indian Standard Time (UTC+05:30, no daylight saving), as the spec's `YYYY-MM-DDThh:mm:ss` without a zone. */
export function formatEsignTimestamp(date: Date): string {
  return new Date(date.getTime() + 5.5 * 3_600_000).toISOString().slice(0, 19);
}

/** A `ts`: without a zone it is Indian Standard Time; with one (Z, +05:30) as written. */
export function parseEsignTimestamp(value: string): Date {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?)(Z|[+-]\d{2}:\d{2})?$/.exec(value);
  const date = match ? new Date(`${match[1]}${match[2] ?? '+05:30'}`) : null;
  if (!date || Number.isNaN(date.getTime())) throw invalid(`ts "${value}" is not a timestamp (YYYY-MM-DDThh:mm:ss)`);
  return date;
}

/** A reader of an element's attributes: a missing one is refused unless it has a default. */
export function attributeReader(element: Element) {
  return (name: string, fallback?: string): string => {
    if (element.hasAttribute(name)) return element.getAttribute(name) ?? '';
    if (fallback !== undefined) return fallback;
    throw invalid(`<${element.tagName}> has no ${name} attribute`);
  };
}

export function childElements(parent: Element, name: string): Element[] {
  const found: Element[] = [];
  for (let child = parent.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === child.ELEMENT_NODE && (child as Element).localName === name && !(child as Element).namespaceURI) {
      found.push(child as Element);
    }
  }
  return found;
}

export function tokenField(value: string, name: string): string {
  if (!TOKEN.test(value)) throw invalid(`${name} must be 1 to 100 printable characters without spaces or quotes`);
  return value;
}

export function invalid(message: string): EsignXmlError {
  return new EsignXmlError('invalid_field', message);
}

export function checkCertificate(pem: string): void {
  try {
    new X509Certificate(pem);
  } catch {
    throw new RangeError('the certificate to verify against is not a certificate');
  }
}

function urlField(value: string, name: string): string {
  if (!isHttpUrl(value)) throw invalid(`${name} must be an http(s) URL`);
  return value;
}

function isHttpUrl(value: string | undefined): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

function checkUrl(value: string | undefined, name: string): string {
  if (!isHttpUrl(value)) throw new RangeError(`${name} must be an http(s) URL`);
  return value;
}

function checkToken(value: string, name: string): string {
  if (typeof value !== 'string' || !TOKEN.test(value)) {
    throw new RangeError(`${name} must be 1 to 100 printable characters without spaces or quotes`);
  }
  return value;
}

function checkMaxWait(minutes: number): number {
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > 999_999) throw new RangeError('maxWaitPeriod: whole minutes');
  return minutes;
}
