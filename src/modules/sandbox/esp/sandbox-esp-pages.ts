/**
 * The sandbox ESP gateway's pages (./sandbox-esp-gateway.ts) and the state they carry between them: plain forms,
 * no external assets, every value escaped.
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { ParsedEsignRequest } from '../../signing';
import { SANDBOX_IDENTITIES } from './sandbox-esp';

/** What the gateway keeps of a verified request, and where the signer is: sealed into the pages' `state` field. */
export interface GatewayState {
  expiresAt: number;
  step: 'aadhaar' | 'authenticate';
  request: Pick<ParsedEsignRequest, 'ver' | 'txn' | 'aspId' | 'responseUrl' | 'redirectUrl' | 'documents'> & {
    /** 1 OTP, 2 biometric; 3.2 leaves it to the signer's choice on the Aadhaar page. */
    authMode: 1 | 2 | null;
    /** 3.2: the ESP's reference given in the acknowledgement, echoed by the final response and in txnref. */
    resCode?: string;
  };
  aadhaar?: string;
  attempts?: number;
}

export type VerifiedRequest = GatewayState['request'];

export interface PageProblems {
  aadhaar?: string;
  consent?: string;
}

export interface Page {
  title: string;
  body: string;
  /** Another origin the page's form posts to (the 2.1 return form). */
  formAction?: string;
  autoSubmit?: boolean;
}

export function aadhaarPage(req: Request, sealed: string, state: GatewayState, problems: PageProblems = {}, typed = ''): Page {
  const { request } = state;
  // 3.2's docUrl: the ASP's link to the document, for the signer to read before consenting.
  const documents = request.documents.map((document) => {
    const name = escapeHtml(document.docInfo || `Document ${document.id}`);
    return `<li>${document.docUrl ? `<a href="${escapeHtml(document.docUrl)}" target="_blank" rel="noopener noreferrer">${name}</a>` : name}</li>`;
  });
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

export function authenticatePage(req: Request, sealed: string, state: GatewayState, problem?: string): Page {
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

export function sendError(res: Response, status: number, message: string): void {
  sendPage(res, status, { title: 'eSign could not continue', body: `<p role="alert">${escapeHtml(message)}</p>` });
}

export function sendPage(res: Response, status: number, page: Page): void {
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
