/** The signer's pages after the request: the Aadhaar number and consent, then the OTP or biometric, then signing. */
import type { Request, Response } from 'express';
import { aadhaarSubject, issueSigningCertificate, normalizeAadhaarNumber, signDetachedCmsOverDigest } from '../../signing';
import { deliver, fail } from './gateway-answers';
import { CERTIFICATE_MS, formField, GATEWAY_ERRORS, MAX_AUTHENTICATION_ATTEMPTS, type Gateway } from './gateway-context';
import { SANDBOX_BIOMETRIC, SANDBOX_IDENTITIES, SANDBOX_OTP } from './sandbox-esp';
import { aadhaarPage, authenticatePage, sendError, sendPage, type GatewayState, type PageProblems } from './sandbox-esp-pages';

/** The state of a page's form, or an answer already sent (tampered, wrong step, expired). */
async function stateOf(gateway: Gateway, req: Request, res: Response, step: GatewayState['step']): Promise<GatewayState | null> {
  const state = gateway.open(formField(req, 'state'));
  if (!state || state.step !== step) {
    sendError(res, 400, 'This page is no longer valid. Start again from the application.');
    return null;
  }
  if (state.expiresAt <= Date.now()) {
    await fail(gateway, res, state.request, GATEWAY_ERRORS.transactionExpired);
    return null;
  }
  if (formField(req, 'action') === 'cancel') {
    await fail(
      gateway,
      res,
      state.request,
      step === 'authenticate' ? GATEWAY_ERRORS.cancelledAfterOtp : GATEWAY_ERRORS.cancelled,
    );
    return null;
  }
  return state;
}

/** `POST <mount>/aadhaar`: a known Aadhaar number and consent lead to the authentication page. */
export function submitAadhaar(gateway: Gateway) {
  return async (req: Request, res: Response) => {
    const state = await stateOf(gateway, req, res, 'aadhaar');
    if (!state) return;
    const aadhaar = normalizeAadhaarNumber(formField(req, 'aadhaar') ?? '');
    const chosenMode = formField(req, 'authMode') === '2' ? 2 : 1;
    const problems: PageProblems = {};
    if (!aadhaar) problems.aadhaar = 'Enter a valid 12-digit Aadhaar number.';
    else if (!SANDBOX_IDENTITIES[aadhaar]) problems.aadhaar = 'This Aadhaar number is not enrolled in the sandbox.';
    if (formField(req, 'consent') !== 'yes') problems.consent = 'Consent is needed to continue.';
    if (problems.aadhaar || problems.consent) {
      sendPage(res, 400, aadhaarPage(req, gateway.seal(state), state, problems, formField(req, 'aadhaar') ?? ''));
      return;
    }
    const next: GatewayState = {
      ...state,
      step: 'authenticate',
      aadhaar: aadhaar!,
      attempts: 0,
      request: { ...state.request, authMode: state.request.authMode ?? chosenMode },
    };
    sendPage(res, 200, authenticatePage(req, gateway.seal(next), next));
  };
}

/** `POST <mount>/authenticate`: the right code signs every document; a wrong one may be retried, up to the limit. */
export function authenticate(gateway: Gateway) {
  return async (req: Request, res: Response) => {
    const state = await stateOf(gateway, req, res, 'authenticate');
    if (!state) return;
    const biometric = state.request.authMode === 2;
    const given = formField(req, biometric ? 'biometric' : 'otp') ?? '';
    if (given.trim() !== (biometric ? SANDBOX_BIOMETRIC : SANDBOX_OTP)) {
      const attempts = (state.attempts ?? 0) + 1;
      if (attempts >= MAX_AUTHENTICATION_ATTEMPTS) {
        return fail(gateway, res, state.request, biometric ? GATEWAY_ERRORS.biometricFailed : GATEWAY_ERRORS.otpFailed);
      }
      const next = { ...state, attempts };
      const left = MAX_AUTHENTICATION_ATTEMPTS - attempts;
      const problem = `${biometric ? 'The capture did not match' : 'The OTP is not correct'}. ${left} attempt${left === 1 ? '' : 's'} left.`;
      sendPage(res, 400, authenticatePage(req, gateway.seal(next), next, problem));
      return;
    }
    await deliver(gateway, res, state.request, signDocuments(gateway, state));
  };
}

/** A 30-minute certificate for the signer, from the gateway's issuer, and a PKCS#7 over each document's hash. */
function signDocuments(gateway: Gateway, state: GatewayState) {
  const { issuer, revocation } = gateway.options;
  const { mobile: _mobile, ...identity } = SANDBOX_IDENTITIES[state.aadhaar!]!;
  const now = Date.now();
  const holder = issueSigningCertificate(
    issuer,
    aadhaarSubject(identity),
    { notBefore: new Date(now - 60_000), notAfter: new Date(now + CERTIFICATE_MS) },
    { revocation },
  );
  const signingIdentity = {
    privateKeyPem: holder.privateKeyPem,
    certificatePem: holder.certificatePem,
    chainPems: [issuer.certificatePem, ...(issuer.chainPems ?? [])],
  };
  const signatures = state.request.documents.map((document) => ({
    id: document.id,
    cms: signDetachedCmsOverDigest(Buffer.from(document.sha256Hex, 'hex'), signingIdentity),
  }));
  return { status: 'success' as const, userCertificatePem: holder.certificatePem, signatures };
}
