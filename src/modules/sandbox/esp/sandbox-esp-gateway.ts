/**
 * The sandbox ESP as a gateway speaking the CCA eSign API over HTTP (versions 2.1 and 3.2), so that the service,
 * or any other ASP, signs through it exactly as through a real ESP. No database: everything it needs is given as
 * options, and the signer's progress between its pages travels in a sealed hidden field (AES-256-GCM, with an
 * expiry), so any process holding the same `stateSecret` can serve the next page. Only a 3.2 request acknowledged
 * and not yet opened by the signer's browser waits in memory, in the process that acknowledged it (10 minutes).
 *
 * The exchange (mount the router at, say, /sandbox/esp):
 *   1. The request, POSTed to the mount path. Every request's signature is checked against the trusted ASP
 *      certificates first.
 *      - 2.1: by the signer's browser, a form (x-www-form-urlencoded): `eSignRequest` = the signed <Esign> XML (as
 *        is, or base64), `aspTxnID` = its txn, `Content-Type` = "application/xml" (the field names C-DAC's and
 *        eMudhra's gateways use; NSDL's `msg` is accepted as a synonym of `eSignRequest`). Refused, the signer sees
 *        an error page and nothing is sent anywhere (the responseUrl of an unverified request may be anyone's).
 *      - 3.2: by the ASP's server, the XML as the body (`application/xml`; the URL-encoded XML as a form body, as
 *        eMudhra's SDK sends it, and the form fields above are read too). Whichever way it came, a 3.2 request is
 *        answered at once, to the caller, with a signed acknowledgement (signing/esp/cca/esign-ack.ts): status="2" and a
 *        resCode, or status="0" with errCode/errMsg (a request that does not verify, a stale ts). The ASP then
 *        sends the signer's browser to `<mount>/authpage` with `txnref` = base64("<txn>|<resCode>") (GET query or
 *        form POST). A browser that posts a 3.2 request itself gets the acknowledgement XML, not a page.
 *   2. Its pages: Aadhaar number (Verhoeff-checked, one of SANDBOX_IDENTITIES) and consent (3.2: the document
 *      links to its docUrl), then the OTP (always 123456) or, with AuthMode 2, the biometric capture
 *      (SANDBOX_BIOMETRIC); a wrong one may be retried, the third closes the transaction. Cancel closes it too.
 *   3. The answer, a signed <EsignResp> (success: a 30-minute certificate from `issuer` and a PKCS#7 over each
 *      InputHash; failure: status="0" with errCode/errMsg, see GATEWAY_ERRORS):
 *      - 2.1: the browser carries it: an auto-submitted form POSTs `eSignResponse` (the XML) and `espTxnID` (the
 *        ESP's resCode) to responseUrl.
 *      - 3.2: the gateway POSTs the XML to responseUrl itself (Content-Type application/xml; the acknowledgement's
 *        resCode), then redirects the browser (303) to redirectUrl with `txnref` = base64("<txn>|<resCode>").
 *      2.1: once a request has verified, every failure after it (a stale ts, an unsupported AuthMode, OTP attempts
 *      used up, cancel, an expired page) is answered this way too; 3.2: every failure after the acknowledgement.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { SecretBox } from '../../../platform/crypto/secret-box';
import {
  aadhaarSubject,
  buildEsignAcknowledgement,
  buildEsignResponse,
  esignTxnRef,
  EsignXmlError,
  issueSigningCertificate,
  keyInfoCertificatePem,
  MAX_ESIGN_XML_BYTES,
  normalizeAadhaarNumber,
  parseAndVerifyEsignRequest,
  parseUntrustedXml,
  readEsignTxnRef,
  signDetachedCmsOverDigest,
  tokenField,
  type KeyAndCertificate,
  type ParsedEsignRequest,
  type RevocationPointers,
} from '../../signing';
import { SANDBOX_BIOMETRIC, SANDBOX_IDENTITIES, SANDBOX_OTP } from './sandbox-esp';
import {
  aadhaarPage,
  authenticatePage,
  escapeHtml,
  sendError,
  sendPage,
  type GatewayState,
  type PageProblems,
  type VerifiedRequest,
} from './sandbox-esp-pages';

export interface SandboxEspGatewayOptions {
  /** The CA that issues each signer's 30-minute certificate (in the service: the sandbox ESP's CA). */
  issuer: KeyAndCertificate & { chainPems?: string[] };
  /** Signs every EsignResp; ASPs verify responses with this certificate. */
  responseSigner: KeyAndCertificate;
  /** The ASPs whose requests are accepted: their request-signing certificates. */
  trustedAspCertificatesPem: string[];
  /**
   * Sandbox only: also accept a request whose signature verifies with the certificate it carries itself, from
   * any ASP. It proves only that the request was not changed on the way.
   */
  trustAnyAsp?: boolean;
  /** Seals the state between the pages: give every process the same one (default: random, this process only). */
  stateSecret?: string;
  /** CRL and OCSP pointers written into the issued certificates. */
  revocation?: RevocationPointers;
  /** A request whose ts is older than this is refused (default 30 minutes; 5 minutes ahead is tolerated). */
  maxRequestAgeMs?: number;
}

/**
 * The errCode/errMsg of the gateway's failure responses. ESP-901 to ESP-911 are the sandbox's own codes (show
 * errMsg, do not branch on them); a Cancel sends the codes real ESPs send for it (ESP-944, ESP-945), which an ASP
 * tells apart from a failed authentication.
 */
export const GATEWAY_ERRORS = {
  requestInvalid: { errCode: 'ESP-901', errMsg: 'The request cannot be served' },
  requestStale: { errCode: 'ESP-902', errMsg: 'The request timestamp is too old or in the future' },
  transactionExpired: { errCode: 'ESP-903', errMsg: 'The transaction expired before the signer finished' },
  otpFailed: { errCode: 'ESP-910', errMsg: 'Aadhaar OTP authentication failed: attempts exhausted' },
  biometricFailed: { errCode: 'ESP-911', errMsg: 'Aadhaar biometric authentication failed: attempts exhausted' },
  // The codes ESPs use for a signer's Cancel (signing/esp/cca/error-codes.ts): before the OTP was sent, and after.
  cancelled: { errCode: 'ESP-944', errMsg: 'User terminated eKYC process' },
  cancelledAfterOtp: { errCode: 'ESP-945', errMsg: 'User terminated eKYC process after OTP Generation' },
} as const;

/** How long the signer has on the gateway's pages, as the in-process sandbox ESP's transactions. */
const TRANSACTION_MS = 10 * 60_000;
const CERTIFICATE_MS = 30 * 60_000;
export const MAX_AUTHENTICATION_ATTEMPTS = 3;
const FUTURE_TOLERANCE_MS = 5 * 60_000;
const RESPONSE_POST_TIMEOUT_MS = 10_000;
/** 3.2 requests acknowledged and waiting for the signer's browser, at most (a full gateway refuses new ones). */
const MAX_WAITING = 10_000;

export function sandboxEspGatewayRouter(options: SandboxEspGatewayOptions): Router {
  const box = new SecretBox(options.stateSecret ?? randomBytes(32).toString('hex'), 'sandbox-esp-gateway-state');
  const maxRequestAge = options.maxRequestAgeMs ?? 30 * 60_000;
  const router = express.Router();
  // A form-encoded request XML may grow up to three times (percent-encoding); the XML itself is checked after.
  router.use(express.urlencoded({ extended: false, limit: MAX_ESIGN_XML_BYTES * 3 + 4096, parameterLimit: 20 }));

  const seal = (state: GatewayState) => box.seal(JSON.stringify(state));
  const open = (sealed: unknown): GatewayState | null => {
    if (typeof sealed !== 'string' || sealed.length > 64 * 1024) return null;
    try {
      return JSON.parse(box.openText(sealed)) as GatewayState;
    } catch {
      return null;
    }
  };

  /** The failure EsignResp, answered to the ASP the way the request's version says. */
  const fail = (req: Request, res: Response, request: VerifiedRequest, error: { errCode: string; errMsg: string }) =>
    deliver(req, res, request, { status: 'failure', ...error });

  const deliver = async (
    req: Request,
    res: Response,
    request: VerifiedRequest,
    outcome:
      | { status: 'failure'; errCode: string; errMsg: string }
      | { status: 'success'; userCertificatePem: string; signatures: { id: string; cms: Uint8Array }[] },
  ) => {
    // 3.2: the acknowledgement's resCode, so the final response and its txnref name what the ASP was told.
    const resCode = request.resCode ?? randomUUID();
    if (request.resCode) waiting.delete(request.resCode);
    const xml = buildEsignResponse({
      version: request.ver,
      txn: request.txn,
      resCode,
      signer: options.responseSigner,
      ...outcome,
    });
    if (request.ver === '2.1') {
      sendPage(res, 200, {
        title: 'Returning to the application',
        formAction: request.responseUrl,
        autoSubmit: true,
        body: `<form id="return" method="post" action="${escapeHtml(request.responseUrl)}">
  <input type="hidden" name="eSignResponse" value="${escapeHtml(xml)}">
  <input type="hidden" name="espTxnID" value="${escapeHtml(resCode)}">
  <p>${outcome.status === 'success' ? 'The document is signed.' : escapeHtml(outcome.errMsg) + '.'} Taking you back to ${escapeHtml(request.aspId)}…</p>
  <button type="submit">Continue to ${escapeHtml(new URL(request.responseUrl).host)}</button>
</form>`,
      });
      return;
    }
    let delivered = false;
    try {
      const answer = await fetch(request.responseUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/xml; charset=utf-8' },
        body: xml,
        redirect: 'manual',
        signal: AbortSignal.timeout(RESPONSE_POST_TIMEOUT_MS),
      });
      await answer.body?.cancel();
      delivered = answer.ok;
    } catch {
      delivered = false;
    }
    const back = new URL(request.redirectUrl!);
    back.searchParams.set('txnref', esignTxnRef(request.txn, resCode));
    if (delivered) {
      res.redirect(303, back.toString());
      return;
    }
    sendPage(res, 502, {
      title: 'The application could not be reached',
      body: `<p role="alert">The response could not be delivered to ${escapeHtml(request.aspId)}. Go back and try again from there.</p>
<p><a href="${escapeHtml(back.toString())}">Return to ${escapeHtml(back.host)}</a></p>`,
    });
  };

  const verifyRequest = (xml: string): ParsedEsignRequest => {
    let lastError: EsignXmlError | null = null;
    for (const certificatePem of options.trustedAspCertificatesPem) {
      try {
        return parseAndVerifyEsignRequest(xml, certificatePem);
      } catch (error) {
        if (!(error instanceof EsignXmlError) || error.problem !== 'signature_invalid') throw error;
        lastError = error;
      }
    }
    if (options.trustAnyAsp) {
      const carried = keyInfoCertificatePem(xml);
      if (carried) return parseAndVerifyEsignRequest(xml, carried);
    }
    throw lastError ?? new EsignXmlError('signature_invalid', 'the request is not signed by a trusted ASP');
  };

  /** 3.2 requests acknowledged, by resCode, until the signer's browser opens them (or they lapse). */
  const waiting = new Map<string, { request: VerifiedRequest; expiresAt: number }>();
  const forgetLapsed = () => {
    const now = Date.now();
    for (const [resCode, entry] of waiting) if (entry.expiresAt <= now) waiting.delete(resCode);
  };

  /** 3.2: the signed acknowledgement, answered to whoever POSTed the request (the ASP's server). */
  const acknowledge = (
    res: Response,
    txn: string,
    outcome: { status: 'accepted'; resCode: string } | { status: 'refused'; errCode: string; errMsg: string },
  ) => {
    const xml = buildEsignAcknowledgement({
      version: '3.2',
      txn,
      signer: options.responseSigner,
      ...(outcome.status === 'accepted'
        ? { status: 'accepted', resCode: outcome.resCode }
        : { status: 'refused', resCode: randomUUID(), errCode: outcome.errCode, errMsg: outcome.errMsg }),
    });
    res.status(200).set({ 'Content-Type': 'application/xml; charset=utf-8', 'Cache-Control': 'no-store' }).send(xml);
  };

  router.post('/', express.text({ type: ['application/xml', 'text/xml'], limit: MAX_ESIGN_XML_BYTES }), async (req, res) => {
    const sent = requestOf(req);
    if (!sent) {
      sendError(res, 400, 'No eSign request was sent (the form field eSignRequest is missing).');
      return;
    }
    let xml: string;
    let parsed: ParsedEsignRequest;
    try {
      xml = requestXml(sent);
      parsed = verifyRequest(xml);
    } catch (error) {
      if (!(error instanceof EsignXmlError)) throw error;
      // A 3.2 caller (the ASP's server) is told in a signed refusal; a browser sees a page, and nobody else anything.
      const claimed = claimedVersionAndTxn(sent);
      if (claimed?.ver === '3.2') {
        acknowledge(res, claimed.txn, { status: 'refused', ...GATEWAY_ERRORS.requestInvalid, errMsg: error.message });
        return;
      }
      sendError(res, 400, `The eSign request was refused: ${error.message}.`);
      return;
    }
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
    const stale = age > maxRequestAge || age < -FUTURE_TOLERANCE_MS;
    if (parsed.ver === '3.2') {
      if (stale) return acknowledge(res, parsed.txn, { status: 'refused', ...GATEWAY_ERRORS.requestStale });
      forgetLapsed();
      if (waiting.size >= MAX_WAITING) {
        return acknowledge(res, parsed.txn, { status: 'refused', ...GATEWAY_ERRORS.requestInvalid, errMsg: 'The ESP is busy' });
      }
      const resCode = randomUUID();
      waiting.set(resCode, { request: { ...request, resCode }, expiresAt: Date.now() + TRANSACTION_MS });
      return acknowledge(res, parsed.txn, { status: 'accepted', resCode });
    }
    // 2.1: from here the request is the ASP's own, so its responseUrl is where problems are answered.
    if (stale) return fail(req, res, request, GATEWAY_ERRORS.requestStale);
    if (parsed.authMode === 3) {
      return fail(req, res, request, { ...GATEWAY_ERRORS.requestInvalid, errMsg: 'Iris authentication is not offered' });
    }
    const state: GatewayState = { expiresAt: Date.now() + TRANSACTION_MS, step: 'aadhaar', request };
    sendPage(res, 200, aadhaarPage(req, seal(state), state));
  });

  /** 3.2: the ESP's authentication page, opened by the signer's browser with the txnref of an acknowledged request. */
  router.all('/authpage', (req, res) => {
    if (req.method !== 'GET' && req.method !== 'POST') {
      sendError(res, 405, 'Open this page from the application.');
      return;
    }
    const given = formField(req, 'txnref') ?? (typeof req.query.txnref === 'string' ? req.query.txnref : undefined);
    const ref = readEsignTxnRef(given);
    const entry = ref ? waiting.get(ref.resCode) : undefined;
    if (!ref || !entry || entry.request.txn !== ref.txn || entry.expiresAt <= Date.now()) {
      sendError(res, 400, 'This eSign request is unknown or has expired. Start again from the application.');
      return;
    }
    const state: GatewayState = { expiresAt: entry.expiresAt, step: 'aadhaar', request: entry.request };
    sendPage(res, 200, aadhaarPage(req, seal(state), state));
  });

  /** The state of a page's form, or an answer already sent (tampered, wrong step, expired). */
  const stateOf = async (req: Request, res: Response, step: GatewayState['step']): Promise<GatewayState | null> => {
    const state = open(formField(req, 'state'));
    if (!state || state.step !== step) {
      sendError(res, 400, 'This page is no longer valid. Start again from the application.');
      return null;
    }
    if (state.expiresAt <= Date.now()) {
      await fail(req, res, state.request, GATEWAY_ERRORS.transactionExpired);
      return null;
    }
    if (formField(req, 'action') === 'cancel') {
      await fail(req, res, state.request, step === 'authenticate' ? GATEWAY_ERRORS.cancelledAfterOtp : GATEWAY_ERRORS.cancelled);
      return null;
    }
    return state;
  };

  router.post('/aadhaar', async (req, res) => {
    const state = await stateOf(req, res, 'aadhaar');
    if (!state) return;
    const aadhaar = normalizeAadhaarNumber(formField(req, 'aadhaar') ?? '');
    const chosenMode = formField(req, 'authMode') === '2' ? 2 : 1;
    const problems: PageProblems = {};
    if (!aadhaar) problems.aadhaar = 'Enter a valid 12-digit Aadhaar number.';
    else if (!SANDBOX_IDENTITIES[aadhaar]) problems.aadhaar = 'This Aadhaar number is not enrolled in the sandbox.';
    if (formField(req, 'consent') !== 'yes') problems.consent = 'Consent is needed to continue.';
    if (problems.aadhaar || problems.consent) {
      sendPage(res, 400, aadhaarPage(req, seal(state), state, problems, formField(req, 'aadhaar') ?? ''));
      return;
    }
    const next: GatewayState = {
      ...state,
      step: 'authenticate',
      aadhaar: aadhaar!,
      attempts: 0,
      request: { ...state.request, authMode: state.request.authMode ?? chosenMode },
    };
    sendPage(res, 200, authenticatePage(req, seal(next), next));
  });

  router.post('/authenticate', async (req, res) => {
    const state = await stateOf(req, res, 'authenticate');
    if (!state) return;
    const biometric = state.request.authMode === 2;
    const given = formField(req, biometric ? 'biometric' : 'otp') ?? '';
    if (given.trim() !== (biometric ? SANDBOX_BIOMETRIC : SANDBOX_OTP)) {
      const attempts = (state.attempts ?? 0) + 1;
      if (attempts >= MAX_AUTHENTICATION_ATTEMPTS) {
        return fail(req, res, state.request, biometric ? GATEWAY_ERRORS.biometricFailed : GATEWAY_ERRORS.otpFailed);
      }
      const next = { ...state, attempts };
      const left = MAX_AUTHENTICATION_ATTEMPTS - attempts;
      const problem = `${biometric ? 'The capture did not match' : 'The OTP is not correct'}. ${left} attempt${left === 1 ? '' : 's'} left.`;
      sendPage(res, 400, authenticatePage(req, seal(next), next, problem));
      return;
    }
    const { mobile: _mobile, ...identity } = SANDBOX_IDENTITIES[state.aadhaar!]!;
    const now = Date.now();
    const holder = issueSigningCertificate(
      options.issuer,
      aadhaarSubject(identity),
      { notBefore: new Date(now - 60_000), notAfter: new Date(now + CERTIFICATE_MS) },
      { revocation: options.revocation },
    );
    const signingIdentity = {
      privateKeyPem: holder.privateKeyPem,
      certificatePem: holder.certificatePem,
      chainPems: [options.issuer.certificatePem, ...(options.issuer.chainPems ?? [])],
    };
    const signatures = state.request.documents.map((document) => ({
      id: document.id,
      cms: signDetachedCmsOverDigest(Buffer.from(document.sha256Hex, 'hex'), signingIdentity),
    }));
    await deliver(req, res, state.request, { status: 'success', userCertificatePem: holder.certificatePem, signatures });
  });

  // Refusals of the body parser (too large, malformed) and anything unexpected: the gateway's own error page.
  router.use((error: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 500;
    sendError(
      res,
      status,
      status === 500 ? 'The sandbox ESP failed. Try again from the application.' : 'The request was refused.',
    );
  });
  return router;
}

// ---------------------------------------------------------------------------------------------------------------
// Input

function formField(req: Request, name: string): string | undefined {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
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
