import { randomBytes } from 'node:crypto';
import type { Request } from 'express';
import { SecretBox } from '../../../platform/crypto/secret-box';
import type { KeyAndCertificate, RevocationPointers } from '../../signing';
import type { GatewayState, VerifiedRequest } from './sandbox-esp-pages';

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
export const TRANSACTION_MS = 10 * 60_000;
export const CERTIFICATE_MS = 30 * 60_000;
export const MAX_AUTHENTICATION_ATTEMPTS = 3;
export const FUTURE_TOLERANCE_MS = 5 * 60_000;
export const RESPONSE_POST_TIMEOUT_MS = 10_000;
/** 3.2 requests acknowledged and waiting for the signer's browser, at most (a full gateway refuses new ones). */
export const MAX_WAITING = 10_000;

/** One gateway's options and what it keeps: the box that seals the pages' state, and the 3.2 requests waiting. */
export interface Gateway {
  options: SandboxEspGatewayOptions;
  maxRequestAgeMs: number;
  seal(state: GatewayState): string;
  /** The state a page's form carried, or null when it was tampered with or is not one. */
  open(sealed: unknown): GatewayState | null;
  /** 3.2 requests acknowledged, by resCode, until the signer's browser opens them (or they lapse). */
  waiting: Map<string, { request: VerifiedRequest; expiresAt: number }>;
}

export function openGateway(options: SandboxEspGatewayOptions): Gateway {
  const box = new SecretBox(options.stateSecret ?? randomBytes(32).toString('hex'), 'sandbox-esp-gateway-state');
  return {
    options,
    maxRequestAgeMs: options.maxRequestAgeMs ?? 30 * 60_000,
    seal: (state) => box.seal(JSON.stringify(state)),
    open: (sealed) => {
      if (typeof sealed !== 'string' || sealed.length > 64 * 1024) return null;
      try {
        return JSON.parse(box.openText(sealed)) as GatewayState;
      } catch {
        return null;
      }
    },
    waiting: new Map(),
  };
}

export function forgetLapsed(gateway: Gateway): void {
  const now = Date.now();
  for (const [resCode, entry] of gateway.waiting) if (entry.expiresAt <= now) gateway.waiting.delete(resCode);
}

export function formField(req: Request, name: string): string | undefined {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}
