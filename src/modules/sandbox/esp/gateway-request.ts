/** The gateway's first step: the ASP's request received and verified, and (3.2) the browser arriving with its txnref. */
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import {
  EsignXmlError,
  parseAndVerifyEsignRequest,
  parseUntrustedXml,
  readEsignTxnRef,
  keyInfoCertificatePem,
  tokenField,
  type ParsedEsignRequest,
} from '../../signing';
import { acknowledge, fail } from './gateway-answers';
import {
  formField,
  forgetLapsed,
  FUTURE_TOLERANCE_MS,
  GATEWAY_ERRORS,
  MAX_WAITING,
  TRANSACTION_MS,
  type Gateway,
} from './gateway-context';
import { aadhaarPage, sendError, sendPage, type GatewayState, type VerifiedRequest } from './sandbox-esp-pages';

/** `POST <mount>`: the request, verified; 3.2 is acknowledged at once, 2.1 opens the Aadhaar page. */
export function receiveRequest(gateway: Gateway) {
  return async (req: Request, res: Response) => {
    const parsed = verifiedOrRefused(gateway, req, res);
    if (!parsed) return;
    const request: VerifiedRequest = {
      ver: parsed.ver,
      txn: parsed.txn,
      aspId: parsed.aspId,
      responseUrl: parsed.responseUrl,
      redirectUrl: parsed.redirectUrl,
      documents: parsed.documents,
      authMode: parsed.authMode === 1 || parsed.authMode === 2 ? parsed.authMode : null,
    };
    const age = Date.now() - parsed.ts.getTime();
    const stale = age > gateway.maxRequestAgeMs || age < -FUTURE_TOLERANCE_MS;
    if (parsed.ver === '3.2') return acceptForLater(gateway, res, request, stale);
    // 2.1: from here the request is the ASP's own, so its responseUrl is where problems are answered.
    if (stale) return fail(gateway, res, request, GATEWAY_ERRORS.requestStale);
    if (parsed.authMode === 3) {
      return fail(gateway, res, request, { ...GATEWAY_ERRORS.requestInvalid, errMsg: 'Iris authentication is not offered' });
    }
    const state: GatewayState = { expiresAt: Date.now() + TRANSACTION_MS, step: 'aadhaar', request };
    sendPage(res, 200, aadhaarPage(req, gateway.seal(state), state));
  };
}

/** The request, its signature checked; null when it was refused (and the refusal already answered). */
function verifiedOrRefused(gateway: Gateway, req: Request, res: Response): ParsedEsignRequest | null {
  const sent = requestOf(req);
  if (!sent) {
    sendError(res, 400, 'No eSign request was sent (the form field eSignRequest is missing).');
    return null;
  }
  try {
    return verifyRequest(gateway, requestXml(sent));
  } catch (error) {
    if (!(error instanceof EsignXmlError)) throw error;
    // A 3.2 caller (the ASP's server) is told in a signed refusal; a browser sees a page, and nobody else anything.
    const claimed = claimedVersionAndTxn(sent);
    if (claimed?.ver === '3.2') {
      acknowledge(gateway, res, claimed.txn, { status: 'refused', ...GATEWAY_ERRORS.requestInvalid, errMsg: error.message });
      return null;
    }
    sendError(res, 400, `The eSign request was refused: ${error.message}.`);
    return null;
  }
}

/** 3.2: acknowledged, and kept until the signer's browser opens it at /authpage. */
function acceptForLater(gateway: Gateway, res: Response, request: VerifiedRequest, stale: boolean): void {
  if (stale) return acknowledge(gateway, res, request.txn, { status: 'refused', ...GATEWAY_ERRORS.requestStale });
  forgetLapsed(gateway);
  if (gateway.waiting.size >= MAX_WAITING) {
    return acknowledge(gateway, res, request.txn, {
      status: 'refused',
      ...GATEWAY_ERRORS.requestInvalid,
      errMsg: 'The ESP is busy',
    });
  }
  const resCode = randomUUID();
  gateway.waiting.set(resCode, { request: { ...request, resCode }, expiresAt: Date.now() + TRANSACTION_MS });
  return acknowledge(gateway, res, request.txn, { status: 'accepted', resCode });
}

/** 3.2: the ESP's authentication page, opened by the signer's browser with the txnref of an acknowledged request. */
export function openAuthPage(gateway: Gateway) {
  return (req: Request, res: Response) => {
    if (req.method !== 'GET' && req.method !== 'POST') {
      sendError(res, 405, 'Open this page from the application.');
      return;
    }
    const given = formField(req, 'txnref') ?? (typeof req.query.txnref === 'string' ? req.query.txnref : undefined);
    const ref = readEsignTxnRef(given);
    const entry = ref ? gateway.waiting.get(ref.resCode) : undefined;
    if (!ref || !entry || entry.request.txn !== ref.txn || entry.expiresAt <= Date.now()) {
      sendError(res, 400, 'This eSign request is unknown or has expired. Start again from the application.');
      return;
    }
    const state: GatewayState = { expiresAt: entry.expiresAt, step: 'aadhaar', request: entry.request };
    sendPage(res, 200, aadhaarPage(req, gateway.seal(state), state));
  };
}

function verifyRequest(gateway: Gateway, xml: string): ParsedEsignRequest {
  let lastError: EsignXmlError | null = null;
  for (const certificatePem of gateway.options.trustedAspCertificatesPem) {
    try {
      return parseAndVerifyEsignRequest(xml, certificatePem);
    } catch (error) {
      if (!(error instanceof EsignXmlError) || error.problem !== 'signature_invalid') throw error;
      lastError = error;
    }
  }
  if (gateway.options.trustAnyAsp) {
    const carried = keyInfoCertificatePem(xml);
    if (carried) return parseAndVerifyEsignRequest(xml, carried);
  }
  throw lastError ?? new EsignXmlError('signature_invalid', 'the request is not signed by a trusted ASP');
}

/**
 * The request as POSTed: the XML body (`application/xml`), a form's `eSignRequest` (or `msg`), or a form body that
 * is the URL-encoded XML itself (eMudhra's SDK): the parser then reads the whole XML as one field name.
 */
function requestOf(req: Request): string | undefined {
  if (typeof req.body === 'string') return req.body.trim() || undefined;
  const field = formField(req, 'eSignRequest') ?? formField(req, 'msg');
  if (field) return field;
  const names = Object.keys((req.body as Record<string, unknown> | undefined) ?? {});
  return names.length === 1 && names[0]!.trimStart().startsWith('<') && formField(req, names[0]!) === '' ? names[0] : undefined;
}

/** The request XML as sent: the XML text itself, or its base64 (as some ASP libraries send it). */
function requestXml(field: string): string {
  const trimmed = field.trim();
  if (trimmed.startsWith('<')) return trimmed;
  const compact = trimmed.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) throw new EsignXmlError('malformed', 'eSignRequest is neither XML nor base64');
  return Buffer.from(compact, 'base64').toString('utf8');
}

/** What a request that did not verify claims to be, read only to know how to refuse it. */
function claimedVersionAndTxn(sent: string): { ver: string; txn: string } | null {
  try {
    const root = parseUntrustedXml(requestXml(sent)).documentElement;
    const txn = root?.getAttribute('txn') ?? '';
    return { ver: root?.getAttribute('ver') ?? '', txn: tokenField(txn, 'txn') };
  } catch {
    return null;
  }
}
