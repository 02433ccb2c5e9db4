/**
 * Revocation data for one certificate, fetched where the certificate says (RFC 5280: authorityInfoAccess OCSP,
 * cRLDistributionPoints) and checked before it is kept: an OCSP response (RFC 6960) signed by the issuer or by a
 * responder the issuer delegated (id-kp-OCSPSigning), for this very certificate, with our nonce when the responder
 * repeats one; else a CRL signed by the issuer. What PAdES B-LT puts in a document's /DSS.
 *
 * The URLs come from certificates in documents anyone can upload: requests are bounded (time, size), follow no
 * redirect, and with `publicOnly` (production) no private, loopback or link-local address is reached, checked where
 * the connection is made.
 */
import { createHash, createVerify, randomBytes, X509Certificate } from 'node:crypto';
import { issuerAndSerial } from '../cms-parse';
import { issuedBy } from '../cms-verify';
import { readBounded } from '../../../platform/net/read-bounded';
import { fetchPublicOnly } from '../../../platform/net/public-targets';
import { children, contentOf, der, DerError, expectTag, oid, raw, readOid, readRoot, readTime, TAG, type Tlv } from '../der';
import { issuerParts, OCSP_OID, OCSP_REQUEST_TYPE } from './revocation-protocol';

export type RevocationStatus = 'good' | 'revoked' | 'unknown' | 'unavailable';

export interface RevocationEvidence {
  status: RevocationStatus;
  /** Where the answer came from; null when no source could be reached or none is named. */
  source: 'ocsp' | 'crl' | null;
  /** The OCSPResponse or the CRL, DER, as fetched (for the /DSS). */
  data: Buffer | null;
  /** When the answer was produced (OCSP producedAt / thisUpdate, CRL thisUpdate). */
  producedAt: Date | null;
  problems: string[];
}

export interface FetchOptions {
  timeoutMs: number;
  /** Refuse targets on private, loopback and link-local addresses (production). */
  publicOnly: boolean;
  /** Ends every request still running, and skips the sources not yet asked: a budget shared by many lookups. */
  budget?: AbortSignal;
}

/** The CRLs asked for one certificate at most: each one named costs a request, and certificates can name many. */
const MAX_CRLS_ASKED = 3;

const MAX_OCSP_BYTES = 64 * 1024;
const MAX_CRL_BYTES = 4 * 1024 * 1024;
const OCSP_SIGNING = '1.3.6.1.5.5.7.3.9';
const CRL_DISTRIBUTION_POINTS = '2.5.29.31';

/** OCSP first (fresh, small), then the CRL; the first source that gives a checked answer wins. */
export async function fetchRevocation(
  certificatePem: string,
  issuerPem: string,
  options: FetchOptions,
): Promise<RevocationEvidence> {
  const certificate = new X509Certificate(certificatePem);
  const problems: string[] = [];
  const ocspUrl = /OCSP - URI:(\S+)/.exec(certificate.infoAccess ?? '')?.[1];
  const spent = () => {
    if (!options.budget?.aborted) return false;
    problems.push('not asked: the time for revocation lookups was spent');
    return true;
  };
  if (ocspUrl && !spent()) {
    try {
      return { ...(await askOcsp(certificate, issuerPem, ocspUrl, options)), problems };
    } catch (error) {
      problems.push(`OCSP ${ocspUrl}: ${(error as Error).message}`);
    }
  }
  const crls = crlUrls(certificate);
  for (const crlUrl of crls.slice(0, MAX_CRLS_ASKED)) {
    if (spent()) break;
    try {
      return { ...(await checkCrl(certificate, issuerPem, crlUrl, options)), problems };
    } catch (error) {
      problems.push(`CRL ${crlUrl}: ${(error as Error).message}`);
    }
  }
  if (crls.length > MAX_CRLS_ASKED) problems.push(`${crls.length - MAX_CRLS_ASKED} more CRL(s) named, not asked`);
  if (!ocspUrl && crls.length === 0) problems.push('the certificate names no OCSP responder and no CRL');
  return { status: 'unavailable', source: null, data: null, producedAt: null, problems };
}

// ---------------------------------------------------------------------------------------------------------------
// OCSP

async function askOcsp(certificate: X509Certificate, issuerPem: string, url: string, options: FetchOptions) {
  const issuer = issuerParts(issuerPem);
  const { serial } = issuerAndSerial(certificate.raw);
  const certId = der(
    TAG.sequence,
    der(TAG.sequence, oid(OCSP_OID.sha1), der(TAG.null)),
    der(TAG.octetString, createHash('sha1').update(issuer.name).digest()),
    der(TAG.octetString, createHash('sha1').update(issuer.keyBits).digest()),
    serial,
  );
  const nonce = der(TAG.octetString, randomBytes(16));
  const request = der(
    TAG.sequence,
    der(
      TAG.sequence,
      der(TAG.sequence, der(TAG.sequence, certId)),
      der(TAG.context2, der(TAG.sequence, der(TAG.sequence, oid(OCSP_OID.nonce), der(TAG.octetString, nonce)))),
    ),
  );
  const response = await fetchBounded(url, options, MAX_OCSP_BYTES, {
    method: 'POST',
    headers: { 'content-type': OCSP_REQUEST_TYPE },
    body: new Uint8Array(request),
  });
  try {
    return { ...checkOcspResponse(response, certificate, issuerPem, serial, nonce), source: 'ocsp' as const, data: response };
  } catch (error) {
    if (error instanceof DerError) throw new Error(`not an OCSP response: ${error.message}`);
    throw error;
  }
}

function checkOcspResponse(
  bytes: Buffer,
  certificate: X509Certificate,
  issuerPem: string,
  serial: Buffer,
  nonce: Buffer | null,
): { status: RevocationStatus; producedAt: Date } {
  const [status, responseBytes] = children(bytes, expectTag(readRoot(bytes), TAG.sequence, 'OCSPResponse'), 2);
  const code = contentOf(bytes, expectTag(status, 0x0a, 'responseStatus'))[0];
  if (code !== 0) throw new Error(`responder answered status ${code}`);
  const [type, octets] = children(
    bytes,
    expectTag(children(bytes, expectTag(responseBytes, TAG.context0, 'responseBytes'))[0], TAG.sequence, 'ResponseBytes'),
  );
  if (readOid(bytes, type) !== OCSP_OID.basic) throw new Error('not a basic OCSP response');
  const basic = contentOf(bytes, expectTag(octets, TAG.octetString, 'response'));
  const [tbs, , signatureBits, certs] = children(basic, expectTag(readRoot(basic), TAG.sequence, 'BasicOCSPResponse'), 4);
  const tbsBytes = raw(basic, expectTag(tbs, TAG.sequence, 'tbsResponseData'));
  const signature = contentOf(basic, expectTag(signatureBits, TAG.bitString, 'signature')).subarray(1);

  const issuer = new X509Certificate(issuerPem);
  const carried = certs
    ? children(basic, children(basic, expectTag(certs, TAG.context0, 'certs'))[0]!, 8).map(
        (c) => new X509Certificate(raw(basic, c)),
      )
    : [];
  // The issuer itself, or a responder it certified for OCSP signing.
  const responder = [issuer, ...carried.filter((c) => issuedBy(c, issuer) && c.keyUsage?.includes(OCSP_SIGNING))].find(
    (candidate) =>
      createVerify('sha256').update(tbsBytes).verify(candidate.publicKey, signature) ||
      createVerify('sha1').update(tbsBytes).verify(candidate.publicKey, signature),
  );
  if (!responder) throw new Error('the response is not signed by the issuer or a responder it delegated');

  const fields = children(basic, tbs!);
  if (fields[0]?.tag === TAG.context0) fields.shift(); // version
  const [, , responses, extensions] = fields;
  const keyHash = createHash('sha1').update(issuerParts(issuerPem).keyBits).digest();
  for (const single of children(basic, expectTag(responses, TAG.sequence, 'responses'), 64)) {
    const [certIdTlv, certStatus, thisUpdate, ...rest] = children(basic, single);
    const [, , issuerKeyHash, responseSerial] = children(basic, expectTag(certIdTlv, TAG.sequence, 'CertID'), 4);
    if (!raw(basic, responseSerial!).equals(serial) || !contentOf(basic, issuerKeyHash!).equals(keyHash)) continue;
    const nextUpdate = rest.find((part) => part.tag === TAG.context0);
    // Fetched now, an answer must be current; embedded in a document, it proves the status when it was produced.
    if (nonce && nextUpdate && readTime(raw(basic, children(basic, nextUpdate)[0]!)).getTime() < Date.now()) {
      throw new Error('the answer is out of date');
    }
    if (nonce) checkNonce(basic, extensions, nonce);
    const state: RevocationStatus = certStatus!.tag === 0x80 ? 'good' : certStatus!.tag === 0xa1 ? 'revoked' : 'unknown';
    return { status: state, producedAt: readTime(raw(basic, thisUpdate!)) };
  }
  throw new Error(`no answer about serial ${certificate.serialNumber}`);
}

/** A responder need not repeat the nonce (many do not); one that repeats another is refused. */
function checkNonce(bytes: Buffer, extensions: Tlv | undefined, nonce: Buffer): void {
  if (!extensions || extensions.tag !== TAG.context1) return;
  for (const extension of children(bytes, children(bytes, extensions)[0]!, 16)) {
    const [type, ...rest] = children(bytes, extension);
    if (readOid(bytes, type) === OCSP_OID.nonce && !contentOf(bytes, rest.at(-1)!).equals(nonce))
      throw new Error('the answer repeats another nonce');
  }
}

// ---------------------------------------------------------------------------------------------------------------
// CRL

async function checkCrl(certificate: X509Certificate, issuerPem: string, url: string, options: FetchOptions) {
  let bytes = await fetchBounded(url, options, MAX_CRL_BYTES, { method: 'GET' });
  if (bytes.subarray(0, 10).toString('latin1') === '-----BEGIN') {
    bytes = Buffer.from(bytes.toString('latin1').replace(/-----[^-]+-----|\s+/g, ''), 'base64');
  }
  try {
    const { status, thisUpdate } = crlStatus(bytes, certificate, issuerPem, true);
    return { status, source: 'crl' as const, data: bytes, producedAt: thisUpdate };
  } catch (error) {
    if (error instanceof DerError) throw new Error(`not a CRL: ${error.message}`);
    throw error;
  }
}

/** The status a CRL the issuer signed gives, and when it was issued; throws when it is not such a CRL (or, `current`, out of date). */
function crlStatus(
  bytes: Buffer,
  certificate: X509Certificate,
  issuerPem: string,
  current: boolean,
): { status: 'good' | 'revoked'; thisUpdate: Date } {
  const [tbs, , signatureBits] = children(bytes, expectTag(readRoot(bytes), TAG.sequence, 'CertificateList'), 3);
  const tbsBytes = raw(bytes, expectTag(tbs, TAG.sequence, 'tbsCertList'));
  const signature = contentOf(bytes, expectTag(signatureBits, TAG.bitString, 'signature')).subarray(1);
  const issuer = new X509Certificate(issuerPem);
  if (!createVerify('sha256').update(tbsBytes).verify(issuer.publicKey, signature)) throw new Error('not signed by the issuer');
  const fields = children(bytes, tbs!, 8);
  if (fields[0]?.tag === TAG.integer) fields.shift(); // version
  const [, , thisUpdate, next, revoked] = fields;
  const nextUpdate = next && (next.tag === TAG.utcTime || next.tag === TAG.generalizedTime) ? next : undefined;
  if (current && nextUpdate && readTime(raw(bytes, nextUpdate)).getTime() < Date.now()) throw new Error('the CRL is out of date');
  const list = nextUpdate ? revoked : next;
  const { serial } = issuerAndSerial(certificate.raw);
  const isRevoked =
    list?.tag === TAG.sequence &&
    children(bytes, list, 1_000_000).some((entry) => raw(bytes, children(bytes, entry)[0]!).equals(serial));
  return { status: isRevoked ? 'revoked' : 'good', thisUpdate: readTime(raw(bytes, thisUpdate!)) };
}

/** The URIs of the certificate's cRLDistributionPoints (fullName URIs only). */
function crlUrls(certificate: X509Certificate): string[] {
  const bytes = certificate.raw;
  try {
    const tbs = children(bytes, children(bytes, readRoot(bytes))[0]!);
    const extensions = tbs.find((part) => part.tag === 0xa3);
    if (!extensions) return [];
    for (const extension of children(bytes, children(bytes, extensions)[0]!)) {
      const [type, ...rest] = children(bytes, extension);
      if (readOid(bytes, type) !== CRL_DISTRIBUTION_POINTS) continue;
      const value = contentOf(bytes, rest.at(-1)!);
      const found: string[] = [];
      const walk = (tlv: Tlv) => {
        if (tlv.tag === 0x86) found.push(contentOf(value, tlv).toString('latin1'));
        else if (tlv.tag & 0x20) for (const child of children(value, tlv)) walk(child);
      };
      walk(readRoot(value));
      return found.filter((url) => /^https?:\/\//.test(url));
    }
  } catch {
    // A certificate whose extensions do not parse names no CRL we can use.
  }
  return [];
}

const MAX_CERTIFICATE_BYTES = 16 * 1024;

/**
 * The issuer's certificate where a certificate says it is published (authorityInfoAccess caIssuers, RFC 5280
 * 4.2.2.1: a DER certificate, or PEM), fetched as revocation data is, with the same bounds; null when none is named
 * or what comes back is no certificate.
 */
export async function fetchIssuerCertificate(certificatePem: string, options: FetchOptions): Promise<X509Certificate | null> {
  const url = /CA Issuers - URI:(\S+)/.exec(new X509Certificate(certificatePem).infoAccess ?? '')?.[1];
  if (!url || options.budget?.aborted) return null;
  try {
    return new X509Certificate(await fetchBounded(url, options, MAX_CERTIFICATE_BYTES, { method: 'GET' }));
  } catch {
    return null;
  }
}

async function fetchBounded(url: string, options: FetchOptions, limit: number, init: RequestInit): Promise<Buffer> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error('not an http(s) URL');
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.budget ? AbortSignal.any([timeout, options.budget]) : timeout;
  const request = { ...init, redirect: 'error' as const, signal };
  const response = options.publicOnly
    ? // The two fetches answer the same Response interface (undici is Node's fetch).
      ((await fetchPublicOnly(target, request as never)) as unknown as Response)
    : await fetch(target, request);
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}`);
  }
  return readBounded(response, limit);
}

/**
 * What a document's /DSS says of a certificate: the first embedded OCSP response about it that its issuer (or a
 * delegated responder) signed, else the first CRL its issuer signed. Historical: no freshness, no nonce.
 */
export function embeddedRevocation(
  certificatePem: string,
  issuerPem: string,
  evidence: { ocsps: Buffer[]; crls: Buffer[] },
): { status: RevocationStatus; source: 'ocsp' | 'crl' | null } {
  const certificate = new X509Certificate(certificatePem);
  const { serial } = issuerAndSerial(certificate.raw);
  for (const response of evidence.ocsps) {
    try {
      return { status: checkOcspResponse(response, certificate, issuerPem, serial, null).status, source: 'ocsp' };
    } catch {
      // about another certificate, or not evidence at all
    }
  }
  for (const crl of evidence.crls) {
    try {
      return { status: crlStatus(crl, certificate, issuerPem, false).status, source: 'crl' };
    } catch {
      // another issuer's list
    }
  }
  return { status: 'unavailable', source: null };
}
