/**
 * The sandbox ESP as a gateway speaking the CCA eSign API over HTTP (versions 2.1 and 3.2), so that the service,
 * or any other ASP, signs through it exactly as through a real ESP. No database: everything it needs is given as
 * options, and the signer's progress between its pages travels in a sealed hidden field (AES-256-GCM, with an
 * expiry), so any process holding the same `stateSecret` can serve the next page.
 *
 * The exchange (mount the router at, say, /sandbox/esp):
 *   1. The signer's browser POSTs a form to the mount path (x-www-form-urlencoded): `eSignRequest` = the signed
 *      <Esign> XML (as is, or base64), `aspTxnID` = its txn, `Content-Type` = "application/xml" (the field names
 *      C-DAC's and eMudhra's gateways use; NSDL's `msg` is accepted as a synonym of `eSignRequest`).
 *      The request's signature is checked against the trusted ASP certificates: refused, the signer sees an error
 *      page and nothing is sent anywhere (the responseUrl of an unverified request may be anyone's).
 *   2. Its pages: Aadhaar number (Verhoeff-checked, one of SANDBOX_IDENTITIES) and consent, then the OTP
 *      (always 123456) or, with AuthMode 2, the biometric capture (SANDBOX_BIOMETRIC); a wrong one may be retried,
 *      the third closes the transaction. Cancel closes it too.
 *   3. The answer, a signed <EsignResp> (success: a 30-minute certificate from `issuer` and a PKCS#7 over each
 *      InputHash; failure: status="0" with errCode/errMsg, see GATEWAY_ERRORS):
 *      - 2.1: the browser carries it: an auto-submitted form POSTs `eSignResponse` (the XML) and `espTxnID` (the
 *        ESP's resCode) to responseUrl.
 *      - 3.2: the gateway POSTs the XML to responseUrl itself (Content-Type application/xml), then redirects the
 *        browser (303) to redirectUrl with `txnref` = base64("<txn>|<resCode>").
 *      Once a request has verified, every failure after it (a stale ts, an unsupported AuthMode, OTP attempts
 *      used up, cancel, an expired page) is answered this way too.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { SecretBox } from '../../../platform/crypto/secret-box';
import { aadhaarSubject } from '../aadhaar-certificate';
import { issueSigningCertificate, type KeyAndCertificate, type RevocationPointers } from '../certificates';
import { signDetachedCmsOverDigest } from '../cms-sign';
import { normalizeAadhaarNumber } from '../verhoeff';
import { parseAndVerifyEsignRequest, type ParsedEsignRequest } from './cca/esign-request';
import { buildEsignResponse } from './cca/esign-response';
import { EsignXmlError, keyInfoCertificatePem, MAX_ESIGN_XML_BYTES } from './cca/xml-dsig';
import { SANDBOX_BIOMETRIC, SANDBOX_IDENTITIES, SANDBOX_OTP } from './sandbox-esp';

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
 * The errCode/errMsg of the gateway's failure responses. These are the sandbox's own codes: the CCA's list of
 * ESP error codes could not be consulted while writing it, so an ASP should show errMsg and not branch on codes
 * beyond "failed".
 */
export const GATEWAY_ERRORS = {
  requestInvalid: { errCode: 'ESP-901', errMsg: 'The request cannot be served' },
  requestStale: { errCode: 'ESP-902', errMsg: 'The request timestamp is too old or in the future' },
  transactionExpired: { errCode: 'ESP-903', errMsg: 'The transaction expired before the signer finished' },
  otpFailed: { errCode: 'ESP-910', errMsg: 'Aadhaar OTP authentication failed: attempts exhausted' },
  biometricFailed: { errCode: 'ESP-911', errMsg: 'Aadhaar biometric authentication failed: attempts exhausted' },
  cancelled: { errCode: 'ESP-920', errMsg: 'The signer cancelled' },
} as const;

/** How long the signer has on the gateway's pages, as the in-process sandbox ESP's transactions. */
const TRANSACTION_MS = 10 * 60_000;
const CERTIFICATE_MS = 30 * 60_000;
export const MAX_AUTHENTICATION_ATTEMPTS = 3;
const FUTURE_TOLERANCE_MS = 5 * 60_000;
const RESPONSE_POST_TIMEOUT_MS = 10_000;

/** What the gateway keeps of a verified request, and where the signer is: sealed into the pages' `state` field. */
interface GatewayState {
  expiresAt: number;
  step: 'aadhaar' | 'authenticate';
  request: Pick<ParsedEsignRequest, 'ver' | 'txn' | 'aspId' | 'responseUrl' | 'redirectUrl' | 'documents'> & {
    /** 1 OTP, 2 biometric; 3.2 leaves it to the signer's choice on the Aadhaar page. */
    authMode: 1 | 2 | null;
  };
  aadhaar?: string;
  attempts?: number;
}

type VerifiedRequest = GatewayState['request'];

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
    const resCode = randomUUID();
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
    back.searchParams.set('txnref', Buffer.from(`${request.txn}|${resCode}`).toString('base64'));
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

  router.post('/', async (req, res) => {
    const field = formField(req, 'eSignRequest') ?? formField(req, 'msg');
    if (!field) {
      sendError(res, 400, 'No eSign request was sent (the form field eSignRequest is missing).');
      return;
    }
    let parsed: ParsedEsignRequest;
    try {
      parsed = verifyRequest(requestXml(field));
    } catch (error) {
      if (!(error instanceof EsignXmlError)) throw error;
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
    // From here the request is the ASP's own, so its responseUrl is where problems are answered.
    const age = Date.now() - parsed.ts.getTime();
    if (age > maxRequestAge || age < -FUTURE_TOLERANCE_MS) return fail(req, res, request, GATEWAY_ERRORS.requestStale);
    if (parsed.authMode === 3) {
      return fail(req, res, request, { ...GATEWAY_ERRORS.requestInvalid, errMsg: 'Iris authentication is not offered' });
    }
    const state: GatewayState = { expiresAt: Date.now() + TRANSACTION_MS, step: 'aadhaar', request };
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
      await fail(req, res, state.request, GATEWAY_ERRORS.cancelled);
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
// Form input

function formField(req: Request, name: string): string | undefined {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}

/** The request XML as sent: the XML text itself, or its base64 (as some ASP libraries send it). */
function requestXml(field: string): string {
  const trimmed = field.trim();
  if (trimmed.startsWith('<')) return trimmed;
  const compact = trimmed.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) throw new EsignXmlError('malformed', 'eSignRequest is neither XML nor base64');
  return Buffer.from(compact, 'base64').toString('utf8');
}

// ---------------------------------------------------------------------------------------------------------------
// Pages: plain forms, no external assets, every value escaped

interface PageProblems {
  aadhaar?: string;
  consent?: string;
}

interface Page {
  title: string;
  body: string;
  /** Another origin the page's form posts to (the 2.1 return form). */
  formAction?: string;
  autoSubmit?: boolean;
}

function aadhaarPage(req: Request, sealed: string, state: GatewayState, problems: PageProblems = {}, typed = ''): Page {
  const { request } = state;
  const documents = request.documents.map((document) => `<li>${escapeHtml(document.docInfo || `Document ${document.id}`)}</li>`);
  const chooseMode =
    request.authMode === null
      ? `<fieldset>
  <legend>How do you want to authenticate?</legend>
  <p><input type="radio" id="mode-otp" name="authMode" value="1" checked> <label for="mode-otp">OTP to your Aadhaar-registered mobile</label></p>
  <p><input type="radio" id="mode-bio" name="authMode" value="2"> <label for="mode-bio">Fingerprint (biometric device)</label></p>
</fieldset>`
      : '';
  return {
    title: 'Sign with Aadhaar',
    body: `<p><strong>${escapeHtml(request.aspId)}</strong> asks you to sign:</p>
<ul>${documents.join('')}</ul>
<form method="post" action="${escapeHtml(`${req.baseUrl}/aadhaar`)}" novalidate>
  <input type="hidden" name="state" value="${escapeHtml(sealed)}">
  ${field('aadhaar', 'Aadhaar number', typed, problems.aadhaar, 'inputmode="numeric" autocomplete="off" maxlength="14" required')}
  ${chooseMode}
  <p><input type="checkbox" id="consent" name="consent" value="yes" required${problems.consent ? ' aria-invalid="true" aria-describedby="consent-error"' : ''}>
  <label for="consent">I consent to this eSign Service Provider authenticating me with my Aadhaar number through UIDAI, and issuing
  a certificate in my name, valid for 30 minutes, to sign the document listed above. My Aadhaar number and
  biometric or OTP are used for this signature only and are not kept.</label></p>
  ${problems.consent ? `<p id="consent-error" class="error">${escapeHtml(problems.consent)}</p>` : ''}
  <p><button type="submit" name="action" value="continue">Continue</button>
  <button type="submit" name="action" value="cancel" formnovalidate>Cancel</button></p>
</form>
<p class="note">Sandbox: the numbers of the sandbox identities are listed in the service's docs/signing.md.</p>`,
  };
}

function authenticatePage(req: Request, sealed: string, state: GatewayState, problem?: string): Page {
  const biometric = state.request.authMode === 2;
  const identity = SANDBOX_IDENTITIES[state.aadhaar!]!;
  const input = biometric
    ? field(
        'biometric',
        'Biometric capture (the sandbox accepts "sandbox-biometric-ok")',
        '',
        problem,
        'autocomplete="off" required',
      )
    : field(
        'otp',
        `One-time password sent to XXXXXX${identity.mobile.slice(-4)} (the sandbox's is always 123456)`,
        '',
        problem,
        'inputmode="numeric" autocomplete="one-time-code" maxlength="6" required',
      );
  return {
    title: biometric ? 'Confirm with your fingerprint' : 'Enter the OTP',
    body: `<form method="post" action="${escapeHtml(`${req.baseUrl}/authenticate`)}" novalidate>
  <input type="hidden" name="state" value="${escapeHtml(sealed)}">
  ${input}
  <p><button type="submit" name="action" value="sign">Sign</button>
  <button type="submit" name="action" value="cancel" formnovalidate>Cancel</button></p>
</form>`,
  };
}

function field(name: string, label: string, value: string, problem: string | undefined, attributes: string): string {
  const described = problem ? ` aria-invalid="true" aria-describedby="${name}-error"` : '';
  return `<p><label for="${name}">${escapeHtml(label)}</label><br>
  <input type="text" id="${name}" name="${name}" value="${escapeHtml(value)}" ${attributes}${described}></p>
  ${problem ? `<p id="${name}-error" class="error">${escapeHtml(problem)}</p>` : ''}`;
}

function sendError(res: Response, status: number, message: string): void {
  sendPage(res, status, { title: 'eSign could not continue', body: `<p role="alert">${escapeHtml(message)}</p>` });
}

function sendPage(res: Response, status: number, page: Page): void {
  const nonce = randomBytes(16).toString('base64');
  const formTargets = ["'self'", ...(page.formAction ? [new URL(page.formAction).origin] : [])].join(' ');
  res.status(status).set({
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; form-action ${formTargets}; base-uri 'none'; frame-ancestors 'none'`,
  }).send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)} – Sandbox eSign Service Provider</title>
<style nonce="${nonce}">
body { font: 1rem/1.5 system-ui, sans-serif; max-width: 36rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
input[type=text] { font-size: 1.1rem; padding: .4rem; width: 100%; box-sizing: border-box; }
button { font-size: 1rem; padding: .5rem 1rem; margin-right: .5rem; }
:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
.error { color: #a50e0e; font-weight: 600; }
.note { color: #444; font-size: .9rem; }
</style>
</head>
<body>
<header><p>Sandbox eSign Service Provider (not a real ESP)</p></header>
<main>
<h1>${escapeHtml(page.title)}</h1>
${page.body}
</main>
${page.autoSubmit ? `<script nonce="${nonce}">document.getElementById('return').submit();</script>` : ''}
</body>
</html>`);
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
