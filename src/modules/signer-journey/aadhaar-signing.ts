import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError, isAppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { recordAudit, type RequestOrigin } from '../audit';
import { EsignSession, lockTurn, signerByToken, publishSignerChange, recordSessionWebhook, Signer } from '../esign';
import { assertChecksPassed } from './checks/checks';
import { espBackends, nameMatchScore, normalizeAadhaarNumber, readAadhaarCertDetails, type EspBackend } from '../signing';
import type { SigningMaterial } from './signing-material';

function esp(session: EsignSession): EspBackend {
  const backend = espBackends[session.backend];
  if (!backend) throw new AppError('conflict', { message: `signing backend ${session.backend} is not available` });
  return backend;
}

/**
 * Aadhaar, step 1: the signer gives an Aadhaar number (checked with its Verhoeff digit) and consents; the
 * ESP of the session's backend starts a transaction and sends an OTP to the holder's registered mobile.
 */
export async function startAadhaarSigning(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { aadhaar_number?: string | null; consent?: boolean | null },
  origin: RequestOrigin,
): Promise<{ transaction_id: string; otp_sent_to: string; expires_at: Date }> {
  const found = await signerByToken(em, token);
  if (input.consent !== true)
    throw AppError.badRequest([{ field: 'consent', problem: 'the signer must consent to sign (consent: true)' }]);
  const aadhaar = normalizeAadhaarNumber(input.aadhaar_number ?? '');
  if (!aadhaar) {
    throw new AppError('invalid_aadhaar_number', {
      errors: [{ field: 'aadhaar_number', problem: '12 digits with a valid Verhoeff check digit' }],
    });
  }
  return em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    if (signer.signType !== 'aadhaar') throw new AppError('conflict', { message: `this signer signs with ${signer.signType}` });
    assertChecksPassed(signer);
    const started = await esp(session).startTransaction(
      { services, em: tx },
      { aadhaar, authMode: signer.authMode, signerId: signer.id },
    );
    recordAudit(tx, { session, signer, event: 'otp_sent', origin, details: { channel: 'aadhaar', sent_to: started.otpSentTo } });
    await tx.flush();
    return { transaction_id: started.transactionId, otp_sent_to: started.otpSentTo, expires_at: started.expiresAt };
  });
}

/**
 * A wrong OTP costs one of `max_retry` attempts, kept even though the request fails (its own transaction:
 * the caller's is rolled back); the last one fails the signer.
 */
async function countFailedAttempt(
  services: AppServices,
  em: EntityManager,
  session: EsignSession,
  signerId: string,
): Promise<{ left: number }> {
  return em.fork().transactional(async (tx) => {
    const [row] = await tx.getConnection().execute<{ failed_attempts: number; max_retry: number; status: string }[]>(
      `update esign_signers set failed_attempts = failed_attempts + 1,
              status = case when failed_attempts + 1 >= max_retry then 'failed' else status end
        where id = ? returning failed_attempts, max_retry, status`,
      [signerId],
      'all',
      tx.getTransactionContext(),
    );
    await publishSignerChange(services, tx, session, { id: signerId, status: row.status });
    return { left: Math.max(0, row.max_retry - row.failed_attempts) };
  });
}

/**
 * Aadhaar, step 2: the OTP of the transaction authenticates the holder with the ESP, which then signs (and
 * issues the holder's certificate) when the signature's byte ranges are ready.
 */
export async function aadhaarMaterial(
  services: AppServices,
  tx: EntityManager,
  session: EsignSession,
  signer: Signer,
  input: { transaction_id?: string | null; otp?: string | null },
): Promise<SigningMaterial> {
  if (!input.transaction_id || !input.otp) throw AppError.missingFields([!input.transaction_id ? 'transaction_id' : 'otp']);
  const backend = esp(session);
  const ctx = { services, em: tx };
  const authenticated = await backend.authenticate(ctx, {
    transactionId: input.transaction_id,
    signerId: signer.id,
    otp: input.otp,
  });
  if (!authenticated.ok) {
    if (authenticated.reason === 'transaction_unknown') {
      throw AppError.badRequest([{ field: 'transaction_id', problem: 'no open transaction for this signer' }]);
    }
    const { left } = await countFailedAttempt(services, tx, session, signer.id);
    throw new AppError(authenticated.reason, {
      message: authenticated.reason,
      errors: [{ field: 'otp', problem: left > 0 ? `${left} attempt(s) left` : 'no attempts left: this signer has failed' }],
    });
  }
  let issued: string | undefined;
  return {
    sign: async (content) => {
      const signed = await backend.sign(ctx, { transactionId: input.transaction_id!, content });
      issued = signed.certificatePem;
      return signed.cms;
    },
    issuedCertificatePem: () => issued,
  };
}

/** What the ESP's certificate says about the holder, and how well its name matches the one expected. */
export function recordAadhaarIdentity(signer: Signer, certificatePem: string): void {
  const details = readAadhaarCertDetails(certificatePem);
  if (!details) return;
  signer.aadhaarCertDetails = details;
  if (signer.nameMatch.enforce) {
    signer.nameMatch = {
      ...signer.nameMatch,
      signer_name: details.name,
      score: nameMatchScore(details.name, signer.nameMatch.prefill_name ?? signer.fullName),
      status: 'completed',
    };
  }
}

/** The ESP refused the OTP (wrong or expired): an attempt was counted. */
export function isRefusedOtp(error: unknown): error is AppError {
  return isAppError(error) && (error.code === 'otp_invalid' || error.code === 'otp_expired');
}

/**
 * A refused Aadhaar OTP is recorded after the signing transaction rolled back (it held the session row, which
 * the audit row refers to), together with the signer's failure when that was the last attempt.
 */
export async function auditRefusedOtp(
  services: AppServices,
  em: EntityManager,
  found: Signer,
  origin: RequestOrigin,
  error: AppError,
) {
  await em.transactional(async (tx) => {
    const signer = await tx.findOneOrFail(Signer, { id: found.id });
    const session = tx.getReference(EsignSession, found.session.id);
    const left = Math.max(0, signer.maxRetry - signer.failedAttempts);
    recordAudit(tx, {
      session,
      signer,
      event: 'otp_failed',
      origin,
      details: { channel: 'aadhaar', reason: error.code, attempts_left: left },
    });
    if (signer.status === 'failed') {
      recordAudit(tx, { session, signer, event: 'signer_failed', origin, details: { reason: 'Aadhaar OTP retries exhausted' } });
      const { user } = await tx.findOneOrFail(EsignSession, { id: found.session.id }, { fields: ['user'] });
      await recordSessionWebhook(services, tx, { id: found.session.id, userId: user.id }, 'esign.signer.failed', signer.id);
    }
  });
}
