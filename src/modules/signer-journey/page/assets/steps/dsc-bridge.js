// The DSC bridge as the signing page sees it: a small program on the signer's own computer (bridge/) at the address
// in <meta name="dsc-bridge">, answering this site's origin only. Its JSON calls (status, certificates, a sign request
// and its long poll), and what the page reads from the certificates it lists.

import { t } from '../i18n.js';

/** A bridge that runs answers /v1/status at once; more than this and the page says it is not running. */
const STATUS_TIMEOUT_MS = 4000;
/** Listing reads every token, which a slow driver may take some seconds for. */
const LIST_TIMEOUT_MS = 20000;
const SIGN_REQUEST_TIMEOUT_MS = 20000;
/** The bridge holds a long poll this long at most (25 s); the page gives it some more before it gives up on one. */
const POLL_WAIT_SECONDS = 25;
const POLL_TIMEOUT_MS = (POLL_WAIT_SECONDS + 10) * 1000;
/** Polls that fail in a row (the bridge restarting, a sleeping laptop) before the page says the bridge went away. */
const POLL_FAILURES = 3;
/** The service takes a chain of at most five certificates besides the signer's. */
const MAX_CHAIN = 5;

/** The bridge's address and the links for a signer without it, from the page shell. */
export function bridgeSettings() {
  const meta = document.querySelector('meta[name="dsc-bridge"]');
  const url = httpUrl(meta?.getAttribute('content'));
  return {
    url: url ? url.replace(/\/+$/, '') : null,
    download: httpUrl(meta?.dataset.download),
    help: httpUrl(meta?.dataset.help),
  };
}

/** `text` when it is an http(s) address, else null: nothing else becomes a link or a request. */
export function httpUrl(text) {
  if (!text) return null;
  try {
    const url = new URL(text, location.href);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * A call to the bridge that did not give what was asked: no answer at all (`unreachable`; a bridge started for another
 * site answers without CORS headers, which is no answer to this page either), or a refusal with the bridge's code.
 */
export class BridgeError extends Error {
  constructor(code, message, status = 0) {
    super(message);
    this.name = 'BridgeError';
    this.code = code;
    this.status = status;
  }
}

/** One JSON call to the bridge, bounded by `timeoutMs` and by `signal` (the step going away). */
async function bridgeCall(base, path, { method = 'GET', json, timeoutMs, signal }) {
  const signals = [AbortSignal.timeout(timeoutMs)];
  if (signal) signals.push(signal);
  let response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: json === undefined ? undefined : { 'content-type': 'application/json' },
      body: json === undefined ? undefined : JSON.stringify(json),
      cache: 'no-store',
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
      signal: AbortSignal.any(signals),
    });
  } catch {
    throw new BridgeError(signal?.aborted ? 'aborted' : 'unreachable', t('dsc.bridge.no_answer'));
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON: judged by the status alone.
  }
  if (!response.ok || !body || typeof body !== 'object') {
    // The bridge's own words (English: it is a program of its own) when it gave them, else the page's.
    throw new BridgeError(
      body?.error?.code ?? `http_${response.status}`,
      body?.error?.message ?? t('dsc.bridge.answered', { status: String(response.status) }),
      response.status,
    );
  }
  return body;
}

/** The bridge's status and every certificate it lists; throws a BridgeError when it does not answer. */
export async function readBridge(base, signal) {
  const status = await bridgeCall(base, '/v1/status', { timeoutMs: STATUS_TIMEOUT_MS, signal });
  const listing = await bridgeCall(base, '/v1/certificates', { timeoutMs: LIST_TIMEOUT_MS, signal });
  return { status, certificates: Array.isArray(listing.certificates) ? listing.certificates : [] };
}

/** A sign request for one digest: the bridge answers {request_id, approve_url, expires_at}. */
export async function requestSignature(base, certificate, document, signal) {
  const created = await bridgeCall(base, '/v1/sign', {
    method: 'POST',
    json: {
      certificate_id: certificate.id,
      digest: document.digest,
      digest_algorithm: 'sha-256',
      description: document.description,
    },
    timeoutMs: SIGN_REQUEST_TIMEOUT_MS,
    signal,
  });
  const approveUrl = httpUrl(created.approve_url);
  if (!approveUrl || typeof created.request_id !== 'string')
    throw new BridgeError('invalid_answer', t('dsc.bridge.no_approval_page'));
  return { requestId: created.request_id, approveUrl };
}

/**
 * Long-polls the request until it is no longer waiting: {status: signed|refused|expired, signature?, error?}. Throws
 * the BridgeError of the bridge going away (POLL_FAILURES failed polls in a row, or a request it no longer knows).
 */
export async function waitForApproval(base, requestId, signal) {
  const path = `/v1/sign/${encodeURIComponent(requestId)}?wait=${POLL_WAIT_SECONDS}`;
  let failures = 0;
  for (;;) {
    try {
      const answer = await bridgeCall(base, path, { timeoutMs: POLL_TIMEOUT_MS, signal });
      failures = 0;
      if (answer.status !== 'waiting') return answer;
    } catch (error) {
      if (signal.aborted || error.code === 'request_not_found' || ++failures >= POLL_FAILURES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000 * failures));
    }
  }
}

/** One attribute of a name as the bridge prints it ("CN=Asha Verma, O=Example, C=IN", most specific first). */
function nameAttribute(name, type) {
  const parts = String(name ?? '').split(/, (?=[A-Za-z][A-Za-z0-9.]*=)/);
  const found = parts.find((part) => part.startsWith(`${type}=`));
  return found ? found.slice(type.length + 1) : null;
}

export const holderOf = (certificate) => nameAttribute(certificate.subject, 'CN') ?? certificate.subject ?? certificate.label;
export const issuerOf = (certificate) =>
  nameAttribute(certificate.issuer, 'CN') ?? nameAttribute(certificate.issuer, 'O') ?? certificate.issuer ?? '';

function base64Bytes(text) {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    return new Uint8Array();
  }
}

/**
 * A CA's certificate (basicConstraints cA = TRUE, or self-signed), which tokens carry beside the signer's as its
 * chain: not one to sign with. The DER is searched for the extension's OID (2.5.29.19) rather than parsed whole.
 */
function isCaCertificate(certificate) {
  if (certificate.subject && certificate.subject === certificate.issuer) return true;
  const der = base64Bytes(certificate.certificate);
  const oid = [0x06, 0x03, 0x55, 0x1d, 0x13];
  for (let i = 0; i + oid.length < der.length; i++) {
    if (!oid.every((byte, k) => der[i + k] === byte)) continue;
    let at = i + oid.length;
    if (der[at] === 0x01 && der[at + 1] === 0x01) at += 3; // critical
    // OCTET STRING { SEQUENCE { BOOLEAN cA ... } } with short lengths, as basicConstraints always is.
    if (der[at] !== 0x04 || der[at + 2] !== 0x30) return false;
    return der[at + 4] === 0x01 && der[at + 5] === 0x01 && der[at + 6] !== 0x00;
  }
  return false;
}

/** The signer's certificates (not the CAs' that tokens carry too), each with `validNow`, the valid ones first. */
export function signingCertificatesOf(certificates) {
  const now = Date.now();
  const validNow = (certificate) =>
    new Date(certificate.not_before).getTime() <= now && now <= new Date(certificate.not_after).getTime();
  return certificates
    .filter((certificate) => typeof certificate?.certificate === 'string' && typeof certificate.id === 'string')
    .filter((certificate) => !isCaCertificate(certificate))
    .map((certificate) => ({ ...certificate, validNow: validNow(certificate) }))
    .sort((a, b) => Number(b.validNow) - Number(a.validNow));
}

/** The CA certificates the chosen one's token carries (then any other token's): the service builds the chain from them. */
export function chainFor(chosen, certificates) {
  const cas = certificates.filter((certificate) => certificate.id !== chosen.id && isCaCertificate(certificate));
  const sameToken = cas.filter((certificate) => certificate.token_serial === chosen.token_serial);
  const others = cas.filter((certificate) => certificate.token_serial !== chosen.token_serial);
  return [...sameToken, ...others].slice(0, MAX_CHAIN).map((certificate) => certificate.certificate);
}
