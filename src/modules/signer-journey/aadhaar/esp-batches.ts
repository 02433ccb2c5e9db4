import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import { documentsOf, documentsSignedBy, type EsignSession, type Signer } from '../../esign/signer-side';
import { MAX_INPUT_HASHES, readAadhaarCertDetails } from '../../signing';
import { EspTransaction } from './esp-transaction.entity';

/**
 * An Aadhaar signer who signs more documents than one eSign transaction carries (MAX_INPUT_HASHES InputHashes) signs
 * them in batches, one transaction and one authentication each, in document order. An answered batch is `held`: its
 * signatures are made and time-stamped but not recorded. The last batch records every document at once; any batch
 * that does not go through (an ESP error, a wrong signature, a cancel, another holder, its window passing) voids the
 * held ones, so a signer's documents are signed together or not at all.
 */

export const HELD_TOO_LONG = 'the documents signed so far waited too long for the next batch';

/** The positions of the documents a signer signs, in batches of MAX_INPUT_HASHES, in order. */
export function batchesOf(positions: number[]): number[][] {
  const batches: number[][] = [];
  for (let start = 0; start < positions.length; start += MAX_INPUT_HASHES)
    batches.push(positions.slice(start, start + MAX_INPUT_HASHES));
  return batches;
}

/** The signer's held batches, in order. */
export function heldBatchesOf(tx: EntityManager, signer: Pick<Signer, 'id'>): Promise<EspTransaction[]> {
  return tx.find(EspTransaction, { signer: signer.id, status: 'held' }, { orderBy: { batch: 'asc' } });
}

export interface NextBatch {
  /** The positions of the documents the next transaction signs. */
  positions: number[];
  batch: number;
  batchCount: number;
  /** The batches held before it, still good: they wait for this one (keepHeldFor). */
  held: EspTransaction[];
  /** Held batches that could no longer be completed and were voided here: their bytes go after the commit. */
  voided: EspTransaction[];
}

/**
 * What the signer's next transaction signs: the batch after those held, if they can still be completed; else the held
 * ones are voided (audited) and the signer starts from the first batch.
 */
export async function nextBatch(
  tx: EntityManager,
  at: { session: EsignSession; signer: Signer; origin: RequestOrigin },
  now: Date,
): Promise<NextBatch> {
  const { session, signer } = at;
  const documents = await documentsOf(tx, session);
  const batches = batchesOf(documentsSignedBy(signer, documents.length));
  let held = await heldBatchesOf(tx, signer);
  const current = new Map(documents.map((document) => [document.id, document.currentPdfFile.id]));
  const problem = heldProblem(held, { signer, current, now, batchCount: batches.length, expected: held.length });
  const voided = problem ? voidHeld(tx, at, held, problem) : [];
  if (problem) held = [];
  return { positions: batches[held.length]!, batch: held.length + 1, batchCount: batches.length, held, voided };
}

/**
 * The held batches wait as long as the batch just started may take: their window is at least its own, so an answer
 * that comes in time for the new batch never finds the earlier ones lapsed.
 */
export function keepHeldFor(held: EspTransaction[], started: Pick<EspTransaction, 'expiresAt'>): void {
  for (const batch of held) if (batch.expiresAt < started.expiresAt) batch.expiresAt = started.expiresAt;
}

/**
 * Why held batches can no longer be completed, or null: one waited past its window, the person changed (a hand-over
 * since), a document moved on (another signature landed on it), or they are not the batches before the one
 * `expected` says (batches 1 to `expected`, of `batchCount`).
 */
export function heldProblem(
  held: EspTransaction[],
  at: { signer: Signer; current: Map<string, string>; now: Date; batchCount: number; expected: number },
): string | null {
  const { signer, current, now, batchCount, expected } = at;
  if (held.length !== expected || held.some((batch, index) => batch.batch !== index + 1 || batch.batchCount !== batchCount))
    return 'the documents signed so far do not match the batches to sign';
  if (held.some((batch) => batch.expiresAt <= now)) return HELD_TOO_LONG;
  if (held.some((batch) => batch.signerTokenHash && batch.signerTokenHash !== signer.tokenHash))
    return 'the signer was replaced after the documents signed so far';
  if (held.some((batch) => batch.documents.some((document) => current.get(document.document_id) !== document.base_file_id)))
    return 'a document changed after it was signed in an earlier batch';
  return null;
}

/** Whether every held batch's certificate names the same holder as `certificatePem` (name and masked Aadhaar). */
export function sameHolder(held: EspTransaction[], certificatePem: string): boolean {
  const holder = readAadhaarCertDetails(certificatePem);
  return held.every((batch) => {
    if (!batch.certificatePem) return false;
    const earlier = readAadhaarCertDetails(batch.certificatePem);
    return earlier.name === holder.name && earlier.aadhaar === holder.aadhaar;
  });
}

/** Voids held batches (nothing of them is recorded): audited; answers them, whose bytes go after the commit. */
export function voidHeld(
  tx: EntityManager,
  at: { session: EsignSession; signer: Signer; origin: RequestOrigin },
  held: EspTransaction[],
  reason: string,
): EspTransaction[] {
  if (held.length === 0) return [];
  for (const batch of held) {
    batch.status = 'expired';
    batch.errorCode = 'esp_batch_voided';
    batch.errorMessage = reason.slice(0, 500);
  }
  recordAudit(tx, {
    session: at.session,
    signer: at.signer,
    event: 'esp_batches_voided',
    origin: at.origin,
    details: { txns: held.map((batch) => batch.txn), reason },
  });
  return held;
}

/**
 * An answered batch that is not the last: its signed PDFs stored, the holder's certificate and each signature kept,
 * and a window (the ESP's timeout) for the signer to start and finish the next batch.
 */
export async function holdBatch(
  services: AppServices,
  tx: EntityManager,
  at: { session: EsignSession; signer: Signer; transaction: EspTransaction; origin: RequestOrigin },
  answer: { signed: Map<number, Uint8Array>; cms: Map<number, Uint8Array>; certificatePem: string; timeoutSeconds: number },
): Promise<void> {
  const { transaction } = at;
  const now = new Date();
  const documents = [];
  for (const document of transaction.documents) {
    const signedKey = `esp/${transaction.txn}-${document.id}-signed.pdf`;
    await services.blobs.putBytes(signedKey, answer.signed.get(document.position)!, 'application/pdf');
    documents.push({
      ...document,
      signed_key: signedKey,
      cms: Buffer.from(answer.cms.get(document.position)!).toString('base64'),
    });
  }
  transaction.documents = documents;
  transaction.status = 'held';
  transaction.certificatePem = answer.certificatePem;
  transaction.answeredAt = now;
  transaction.expiresAt = new Date(now.getTime() + answer.timeoutSeconds * 1000);
  recordAudit(tx, {
    session: at.session,
    signer: at.signer,
    event: 'esp_batch_held',
    origin: at.origin,
    details: {
      txn: transaction.txn,
      batch: transaction.batch,
      batch_count: transaction.batchCount,
      document_ids: transaction.documents.map((document) => document.document_id),
      next_batch_by: transaction.expiresAt.toISOString(),
    },
  });
  await tx.flush();
}

/** The held batches' signed PDFs, by document position, to be recorded with the last batch's. */
export async function heldSignedPdfs(services: AppServices, held: EspTransaction[]): Promise<Map<number, Uint8Array> | null> {
  const signed = new Map<number, Uint8Array>();
  for (const document of held.flatMap((batch) => batch.documents)) {
    const bytes = document.signed_key ? await services.blobs.getBytes(document.signed_key).catch(() => null) : null;
    if (!bytes) return null;
    signed.set(document.position, bytes);
  }
  return signed;
}

/** The signatures the held batches carry (for the revocation looked up before the last one completes the session). */
export function heldSignatures(held: EspTransaction[]): Uint8Array[] {
  return held.flatMap((batch) =>
    batch.documents.flatMap((document) => (document.cms ? [Buffer.from(document.cms, 'base64')] : [])),
  );
}
