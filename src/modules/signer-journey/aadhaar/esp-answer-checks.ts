import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import { documentsOf, isSignersTurn } from '../../esign/signer-side';
import { checkReturnedSignature, type ParsedEsignResponse } from '../../signing';
import { heldBatchesOf, heldProblem, heldSignedPdfs, sameHolder, voidHeld } from './esp-batches';
import { expire, failTransaction, type EspResponseOutcome } from './esp-outcomes';
import type { EspDocumentHash, EspTransaction } from './esp-transaction.entity';

/** The checks an ESP's answer passes before its signatures are recorded (acceptEspResponse), and what refuses it. */

/** A response whose `ts` is further from now than this is refused (clocks of ASP and ESP may differ a little). */
const RESPONSE_CLOCK_SKEW_MS = 10 * 60_000;

/** `keepsBytes`: the one refusal after which the transaction is still pending (a stale ts; a current answer may follow). */
export type EspAnswer = EspResponseOutcome | { retry: string; keepsBytes?: true };
export type AnswerAt = Parameters<typeof failTransaction>[2];

/**
 * A response to a transaction that is not open to one (abandoned, timed out, answered already), or whose `ts` is
 * not current: the refusal. A pending transaction found past its time expires here.
 */
export async function notAnswerable(
  tx: EntityManager,
  transaction: EspTransaction,
  response: ParsedEsignResponse,
  now: Date,
): Promise<EspAnswer | null> {
  const timedOut = `transaction ${transaction.txn} timed out at ${transaction.expiresAt.toISOString()}`;
  if (transaction.status === 'expired' && transaction.errorCode === 'esp_abandoned')
    return { retry: `transaction ${transaction.txn} was abandoned: the signer started again` };
  if (transaction.status === 'expired') return { retry: timedOut };
  if (transaction.status !== 'pending')
    return { retry: `transaction ${transaction.txn} was answered already (${transaction.status})` };
  if (transaction.expiresAt <= now) {
    await expire(tx, transaction);
    return { retry: timedOut };
  }
  if (Math.abs(response.ts.getTime() - now.getTime()) > RESPONSE_CLOCK_SKEW_MS) {
    return { retry: `the response's ts (${response.ts.toISOString()}) is not current`, keepsBytes: true };
  }
  return null;
}

/**
 * An answer that fails the transaction (checked in this order): the signer was replaced, the ESP's error, any
 * document without a signature that signs its InputHash (one wrong signature fails them all: a signer's documents
 * are signed together or not at all), a document that moved on, earlier batches that can no longer be completed or
 * were another holder's, prepared bytes that are gone. A failure voids the signer's held batches too (`spent`).
 * Otherwise each returned signature with its document and the prepared PDF it goes into, and the held batches with
 * their signed PDFs.
 */
export async function failedAnswer(
  services: AppServices,
  tx: EntityManager,
  at: AnswerAt,
  response: ParsedEsignResponse,
  spent: EspTransaction[],
) {
  const { session, signer, transaction } = at;
  const held = await heldBatchesOf(tx, signer);
  const failed = async (code: string, message: string, options?: { costsAttempt: boolean }) => {
    await failTransaction(services, tx, at, code, message, options);
    spent.push(...voidHeld(tx, at, held, `batch ${transaction.batch} of ${transaction.batchCount} did not go through`));
    return { accepted: true, txn: transaction.txn, status: 'failed' } as const;
  };
  if (transaction.signerTokenHash && transaction.signerTokenHash !== signer.tokenHash) {
    // Whatever the ESP says (a signature or an error) is about the person who left; the one who came is not charged.
    return failed(
      'signer_replaced',
      'the signer was replaced (reassigned or delegated) while the ESP was signing: nothing is recorded',
      { costsAttempt: false },
    );
  }
  if (response.status !== '1') return failed(response.errCode || 'esp_error', response.errMsg);
  const returned = transaction.documents.map((document) => ({
    document,
    signature: response.signatures.find((candidate) => candidate.id === document.id && candidate.error === ''),
  }));
  const problems = returned.flatMap(({ document, signature }) => {
    if (!signature) return [`no signature of InputHash ${document.id}`];
    return checkReturnedSignature(signature.cms, document.input_hash, response.userCertificatePem).map(
      (problem) => `InputHash ${document.id}: ${problem}`,
    );
  });
  if (problems.length > 0) return failed('esp_signature_invalid', problems.join('; '));
  const current = new Map((await documentsOf(tx, session)).map((document) => [document.id, document.currentPdfFile.id]));
  const moved = transaction.documents.some((document) => current.get(document.document_id) !== document.base_file_id);
  if (!isSignersTurn(session, signer) || moved) {
    // The session ended, or another signature landed first (parallel signing): this one is over another revision.
    return failed('document_changed', 'the document changed while the ESP was signing; sign again', { costsAttempt: false });
  }
  const facts = { signer, current, now: new Date(), batchCount: transaction.batchCount, expected: transaction.batch - 1 };
  const lapsed = heldProblem(held, facts);
  if (lapsed) return failed('esp_batch_voided', `${lapsed}; sign again from the first batch`, { costsAttempt: false });
  if (!sameHolder(held, response.userCertificatePem))
    return failed('esp_holder_changed', 'another Aadhaar holder signed an earlier batch of these documents');
  const heldSigned = transaction.batch === transaction.batchCount ? await heldSignedPdfs(services, held) : new Map();
  const signed: { document: EspDocumentHash; cms: Uint8Array; prepared: Buffer }[] = [];
  for (const { document, signature } of returned) {
    const prepared = await services.blobs.getBytes(document.prepared_key).catch(() => null);
    if (!prepared || prepared.length < document.contents_end || !heldSigned) {
      // Not expected (the bytes go only with a transaction that is over), but never half a signature nor a 500.
      return failed('prepared_missing', 'the prepared document is gone; sign again', { costsAttempt: false });
    }
    signed.push({ document, cms: signature!.cms, prepared });
  }
  return { signed, held, heldSigned: heldSigned! };
}
