import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { recordAudit, type RequestOrigin } from '../audit';
import {
  assertFieldsComplete,
  completeEnvelope,
  documentsOf,
  EsignSession,
  type EsignDocument,
  fillServiceValues,
  lockTurn,
  signerByToken,
  recordSignature,
  Signer,
  type CompletedEnvelope,
} from '../esign/signer-side';
import { StoredFile } from '../files';
import {
  fillSignature,
  prefetchRevocation,
  timestampSignature,
  type KnownRevocation,
  type PreparedSignature,
  type SignatureAppearance,
  signedRange,
} from '../signing';
import { assertChecksPassed } from './checks/checks';
import { documentsToSign, fieldNameOf, fillsOf } from './prepare-document';
import { platformOrPfx } from './signing-material';

/**
 * The signer whose turn it is signs with a key held here (suresign, PFX), on consent: one incremental PAdES
 * signature over the current PDF of every document they sign, with its appearance at their placements there, all
 * recorded together or none. The session row is locked for the whole step, so a double submit cannot sign twice.
 * Aadhaar signers sign through their ESP (aadhaar-signing.ts), DSC signers with their token (dsc/dsc-signing.ts).
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
  if (found.signType === 'dsc') {
    throw new AppError('conflict', { message: 'DSC signers sign with their own token: POST /signer-api/dsc/start' });
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
    const time = new Date();
    const signed = new Map<number, Uint8Array>();
    // The key signs here each update the worker pool built.
    for (const { document, update } of await signatureUpdates(services, tx, session, signer, time)) {
      const signature = await material.sign(signedRange(update));
      signed.set(document.position, fillSignature(update, await timestampSignature(services.config.tsa, signature)));
    }
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
 * The revocation of the certificates the session's current documents carry, and of those the coming signature
 * adds, looked up before its transaction (prefetchRevocation), for every document at once.
 */
export async function revocationBeforeCompletion(
  services: AppServices,
  em: EntityManager,
  session: EsignSession,
  adding: { certificatesPem?: string[]; cms?: Uint8Array[] },
): Promise<KnownRevocation> {
  const reader = em.fork();
  const pdfs: Uint8Array[] = [];
  for (const document of await documentsOf(reader, session)) {
    pdfs.push(
      await services.blobs.getBytes((await reader.findOneOrFail(StoredFile, { id: document.currentPdfFile.id })).storageKey),
    );
  }
  return prefetchRevocation(services, em, { pdfs, certificatesPem: adding.certificatesPem, cms: adding.cms });
}

/**
 * The signer's signature update over the current PDF of each document they sign (prepared first if nobody signed
 * yet), its /Contents still empty: built from the parsed document in the worker pool, the signer's values with it.
 * `only`: those positions of them (one batch of an Aadhaar signer).
 */
export async function signatureUpdates(
  services: AppServices,
  tx: EntityManager,
  session: EsignSession,
  signer: Signer,
  time: Date,
  only?: number[],
): Promise<{ document: EsignDocument; update: PreparedSignature }[]> {
  const updates: { document: EsignDocument; update: PreparedSignature }[] = [];
  for (const { document, pdf } of await documentsToSign(services, tx, session, signer, only)) {
    const fills = await fillsOf(services, tx, session, signer, document.position, time);
    const update = await services.untrusted.run<PreparedSignature>('buildSignatureUpdateTask', {
      pdf,
      appearance: signerAppearance(signer, time, fills),
    });
    updates.push({ document, update });
  }
  return updates;
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
 * Records a signer's signatures made over the current PDFs of the documents they sign (by a key held here, or
 * returned by an ESP), under the session lock the caller holds: the audit row, and when it is the last signature to
 * be made (in either signing order: signerIdx counts the signatures made so far) the completion of the envelope
 * before it is stored: its certificate of completion, and every document's validation data (B-LT) with a document
 * time-stamp (B-LTA).
 */
export async function recordSignedRevision(
  services: AppServices,
  tx: EntityManager,
  input: {
    session: EsignSession;
    signer: Signer;
    /** The signed revision of each document the signer signed, by position. */
    signed: ReadonlyMap<number, Uint8Array>;
    time: Date;
    origin?: RequestOrigin;
    /** What was learned of revocation before the transaction (revocationBeforeCompletion). */
    knownRevocation?: KnownRevocation;
  },
): Promise<EsignSession> {
  const { session, signer, time, origin } = input;
  // The values the service filled in the signature's update (date_signed), kept with what the signer filled.
  fillServiceValues(signer, time);
  const documents = await documentsOf(tx, session);
  recordAudit(tx, {
    session,
    signer,
    event: 'signed',
    origin,
    details: {
      sign_type: signer.signType,
      field: fieldNameOf(signer),
      signed_at: time.toISOString(),
      ...(documents.length > 1 && {
        documents: documents
          .filter((document) => input.signed.has(document.position))
          .map((document) => ({ document_id: document.id, name: document.name })),
      }),
    },
  });
  await tx.flush();
  let signed = input.signed;
  let completed: CompletedEnvelope | undefined;
  if (session.signerIdx === (await tx.count(Signer, { session })) - 1) {
    // Every document completes: those this signer did not sign stand as the others left them.
    const last: Uint8Array[] = [];
    for (const document of documents) {
      last[document.position] =
        input.signed.get(document.position) ??
        (await services.blobs.getBytes((await tx.findOneOrFail(StoredFile, { id: document.currentPdfFile.id })).storageKey));
    }
    completed = await completeEnvelope(services, tx, session, last, { signer, signedAt: time }, input.knownRevocation);
    signed = new Map(completed.documents.map((pdf, position) => [position, pdf]));
  }
  const ltv = completed?.ltv;
  const recorded = await recordSignature(services, tx, {
    sessionId: session.id,
    signerId: signer.id,
    signedPdfs: signed,
    completionCertificate: completed?.certificate,
  });
  if (recorded.status === 'completed') {
    recordAudit(tx, {
      session: recorded,
      event: 'session_completed',
      details: {
        completion_certificate_file_id: recorded.completionCertificateFile?.id ?? null,
        certificate_appended: recorded.appendCertificate,
        ...(ltv?.[0] && { document_timestamp: ltv[0].documentTimestamp, revocation: ltv[0].revocation }),
        ...(documents.length > 1 && {
          documents: documents.map((document) => ({
            document_id: document.id,
            name: document.name,
            document_timestamp: ltv?.[document.position]?.documentTimestamp ?? null,
          })),
        }),
      },
    });
  }
  await tx.flush();
  return recorded;
}
