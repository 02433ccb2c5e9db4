import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { recordAudit, type RequestOrigin } from '../audit';
import {
  assertFieldsComplete,
  completeDocument,
  EsignSession,
  fillServiceValues,
  lockTurn,
  signerByToken,
  recordSignature,
  Signer,
  type CompletedDocument,
} from '../esign/signer-side';
import { StoredFile } from '../files';
import {
  fillSignature,
  prefetchRevocation,
  timestampSignature,
  type KnownRevocation,
  type PreparedSignature,
  type SignatureAppearance,
} from '../signing';
import { assertChecksPassed } from './checks/checks';
import { ensurePrepared, fieldNameOf, fillsOf } from './prepare-document';
import { platformOrPfx } from './signing-material';

/**
 * The signer whose turn it is signs with a key held here (suresign, PFX), on consent: one incremental PAdES
 * signature over the current PDF, with its appearance at the signer's placements. The session row is locked for
 * the whole step, so a double submit cannot sign twice. Aadhaar signers sign through their ESP (aadhaar-esign.ts).
 */
export async function signAsSigner(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { consent?: boolean | null },
  origin: RequestOrigin,
): Promise<EsignSession> {
  const found = await signerByToken(em, token);
  if (input.consent !== true)
    throw AppError.badRequest([{ field: 'consent', problem: 'the signer must consent to sign (consent: true)' }]);
  if (found.signType === 'aadhaar') {
    throw new AppError('conflict', {
      message: 'Aadhaar signers sign through their eSign Service Provider: POST /signer-api/esp/start',
    });
  }
  // The last signature completes the document: its key is opened and the revocation of every certificate the
  // document will carry is looked up now, while no transaction waits on the servers those certificates name.
  const ready = found.status === 'pending' && passesChecks(found);
  const early =
    ready && (await completesOnNextSignature(services, em, found.session)) ? await platformOrPfx(services, em, found) : undefined;
  const knownRevocation = early
    ? await revocationBeforeCompletion(services, em, found.session, { certificatesPem: early.certificatesPem })
    : undefined;
  return em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    assertChecksPassed(signer);
    assertFieldsComplete(signer);
    const material = early ?? (await platformOrPfx(services, tx, signer));
    const working = await ensurePrepared(services, tx, session);
    const time = new Date();
    // The update is built from the parsed document in the worker pool (the signer's values with it); the key signs here.
    const update = await services.untrusted.run<PreparedSignature>('buildSignatureUpdateTask', {
      pdf: working,
      appearance: signerAppearance(signer, time, await fillsOf(services, tx, session, signer, time)),
    });
    const { updated, contentsAt, contentsEnd } = update;
    const signature = await material.sign([updated.subarray(0, contentsAt), updated.subarray(contentsEnd)]);
    const signed = fillSignature(update, await timestampSignature(services.config.tsa, signature));
    return recordSignedRevision(services, tx, { session, signer, signed, time, origin, knownRevocation });
  });
}

function passesChecks(signer: Signer): boolean {
  try {
    assertChecksPassed(signer);
    return true;
  } catch {
    return false;
  }
}

/** Whether the next signature would be the session's last (a guess made without the lock; the step decides again). */
export async function completesOnNextSignature(
  services: AppServices,
  em: EntityManager,
  session: EsignSession,
): Promise<boolean> {
  if (!services.config.padesLtv || session.status !== 'pending') return false;
  return session.signerIdx === (await em.fork().count(Signer, { session: session.id })) - 1;
}

/**
 * The revocation of the certificates the session's current document carries, and of those the coming signature
 * adds, looked up before its transaction (prefetchRevocation).
 */
export async function revocationBeforeCompletion(
  services: AppServices,
  em: EntityManager,
  session: EsignSession,
  adding: { certificatesPem?: string[]; cms?: Uint8Array[]; pdf?: Uint8Array },
): Promise<KnownRevocation> {
  const pdf =
    adding.pdf ??
    (await services.blobs.getBytes((await em.fork().findOneOrFail(StoredFile, { id: session.currentPdfFile.id })).storageKey));
  return prefetchRevocation(services, em, { pdf, certificatesPem: adding.certificatesPem, cms: adding.cms });
}

/** What a signer's signature shows in its widgets, names in its dictionary, and writes into the signer's fields. */
export function signerAppearance(signer: Signer, time: Date, fills: SignatureAppearance['fills']): SignatureAppearance {
  return {
    fills,
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
}

/**
 * Records a signature made over the session's current PDF (by a key held here, or returned by an ESP), under the
 * session lock the caller holds: the audit row, and when it is the last signature to be made (in either signing
 * order: signerIdx counts the signatures made so far) the completion of the document before it is stored: its
 * certificate of completion, and its validation data (B-LT) with a document time-stamp (B-LTA).
 */
export async function recordSignedRevision(
  services: AppServices,
  tx: EntityManager,
  input: {
    session: EsignSession;
    signer: Signer;
    signed: Uint8Array;
    time: Date;
    origin?: RequestOrigin;
    /** What was learned of revocation before the transaction (revocationBeforeCompletion). */
    knownRevocation?: KnownRevocation;
  },
): Promise<EsignSession> {
  const { session, signer, time, origin } = input;
  // The values the service filled in the signature's update (date_signed), kept with what the signer filled.
  fillServiceValues(signer, time);
  recordAudit(tx, {
    session,
    signer,
    event: 'signed',
    origin,
    details: { sign_type: signer.signType, field: fieldNameOf(signer), signed_at: time.toISOString() },
  });
  await tx.flush();
  let signed = input.signed;
  let completed: CompletedDocument | undefined;
  if (session.signerIdx === (await tx.count(Signer, { session })) - 1) {
    completed = await completeDocument(services, tx, session, signed, { signer, signedAt: time }, input.knownRevocation);
    signed = completed.pdf;
  }
  const ltv = completed?.ltv;
  const recorded = await recordSignature(services, tx, {
    sessionId: session.id,
    signerId: signer.id,
    signedPdf: signed,
    completionCertificate: completed?.certificate,
  });
  if (recorded.status === 'completed') {
    recordAudit(tx, {
      session: recorded,
      event: 'session_completed',
      details: {
        completion_certificate_file_id: recorded.completionCertificateFile?.id ?? null,
        certificate_appended: recorded.appendCertificate,
        ...(ltv && { document_timestamp: ltv.documentTimestamp, revocation: ltv.revocation }),
      },
    });
  }
  await tx.flush();
  return recorded;
}
