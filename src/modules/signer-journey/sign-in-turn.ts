import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { recordAudit, type RequestOrigin } from '../audit';
import { EsignSession, lockTurn, signerByToken, recordSignature, Signer } from '../esign';
import {
  addLongTermValidation,
  fillSignature,
  timestampSignature,
  type LongTermValidation,
  type PreparedSignature,
  type SignatureAppearance,
} from '../signing';
import { aadhaarMaterial, auditRefusedOtp, isRefusedOtp, recordAadhaarIdentity } from './aadhaar-signing';
import { assertChecksPassed } from './checks/checks';
import { ensurePrepared, fieldNameOf } from './prepare-document';
import { platformOrPfx } from './signing-material';

/**
 * The signer whose turn it is signs, on consent (Aadhaar signers with their OTP transaction): one incremental
 * PAdES signature over the current PDF, with its appearance at the signer's placements. The session row is
 * locked for the whole step, so a double submit cannot sign twice.
 */
export async function signAsSigner(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { consent?: boolean | null; transaction_id?: string | null; otp?: string | null },
  origin: RequestOrigin,
): Promise<EsignSession> {
  const found = await signerByToken(em, token);
  if (input.consent !== true)
    throw AppError.badRequest([{ field: 'consent', problem: 'the signer must consent to sign (consent: true)' }]);
  try {
    return await signInTurn(services, em, found, input, origin);
  } catch (error) {
    if (isRefusedOtp(error)) await auditRefusedOtp(services, em.fork(), found, origin, error);
    throw error;
  }
}

async function signInTurn(
  services: AppServices,
  em: EntityManager,
  found: Signer,
  input: { transaction_id?: string | null; otp?: string | null },
  origin: RequestOrigin,
): Promise<EsignSession> {
  return em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    assertChecksPassed(signer);
    const material =
      signer.signType === 'aadhaar'
        ? await aadhaarMaterial(services, tx, session, signer, input)
        : await platformOrPfx(services, tx, signer);
    const working = await ensurePrepared(services, tx, session);
    const time = new Date();
    const appearance: SignatureAppearance = {
      fieldName: fieldNameOf(signer),
      signerName: signer.fullName,
      reason: signer.reason,
      time,
      appearanceLines: [
        `Digitally signed by ${signer.fullName}`,
        `Date: ${time.toISOString().replace('T', ' ').slice(0, 19)} UTC`,
        ...(signer.reason ? [`Reason: ${signer.reason}`] : []),
      ],
    };
    // The update is built from the parsed document in the worker pool; the key signs here.
    const update = await services.untrusted.run<PreparedSignature>('buildSignatureUpdateTask', { pdf: working, appearance });
    const { updated, contentsAt, contentsEnd } = update;
    const signature = await material.sign([updated.subarray(0, contentsAt), updated.subarray(contentsEnd)]);
    let signed: Uint8Array = fillSignature(update, await timestampSignature(services.config.tsa, signature));
    // The last signature completes the document: its validation data (B-LT) and a document time-stamp (B-LTA)
    // are added before it is recorded, so the completed PDF is the long-term one.
    let ltv: LongTermValidation | undefined;
    // The last signature to be made, in either signing order (signerIdx counts the signatures made so far).
    if (services.config.padesLtv && session.signerIdx === (await tx.count(Signer, { session })) - 1) {
      ltv = await addLongTermValidation(services, tx, signed);
      signed = ltv.pdf;
    }
    const issued = material.issuedCertificatePem?.();
    if (issued) recordAadhaarIdentity(signer, issued);
    recordAudit(tx, {
      session,
      signer,
      event: 'signed',
      origin,
      details: { sign_type: signer.signType, field: fieldNameOf(signer), signed_at: time.toISOString() },
    });
    await tx.flush();
    const recorded = await recordSignature(services, tx, { sessionId: session.id, signerId: signer.id, signedPdf: signed });
    if (recorded.status === 'completed') {
      recordAudit(tx, {
        session: recorded,
        event: 'session_completed',
        details: ltv && { document_timestamp: ltv.documentTimestamp, revocation: ltv.revocation },
      });
    }
    await tx.flush();
    return recorded;
  });
}
