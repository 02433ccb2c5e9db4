import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';

/**
 * An eSign Service Provider, the way CCA's eSign API works: the signer's Aadhaar number starts a
 * transaction and the ESP sends an OTP to the holder; with the right OTP the ESP issues a short-lived
 * certificate for the holder and signs the document hash with it. One implementation per `backend`.
 */
export interface EspBackend {
  readonly name: string;
  startTransaction(
    ctx: EspContext,
    input: { aadhaar: string; authMode: number; signerId: string },
  ): Promise<EspTransactionStarted>;
  /** Checks the OTP (or, with auth mode 2, the biometric capture) of a transaction. */
  authenticate(ctx: EspContext, input: { transactionId: string; signerId: string; otp: string }): Promise<EspAuthentication>;
  /** After a successful authentication: the CMS over `content`, made with the holder's new certificate. */
  sign(
    ctx: EspContext,
    input: { transactionId: string; content: readonly Uint8Array[] },
  ): Promise<{ cms: Uint8Array; certificatePem: string }>;
}

export interface EspContext {
  services: AppServices;
  em: EntityManager;
}

export interface EspTransactionStarted {
  transactionId: string;
  /** Where the OTP went, masked, e.g. "XXXXXX3210". */
  otpSentTo: string;
  expiresAt: Date;
}

export type EspAuthentication = { ok: true } | { ok: false; reason: 'otp_invalid' | 'otp_expired' | 'transaction_unknown' };
