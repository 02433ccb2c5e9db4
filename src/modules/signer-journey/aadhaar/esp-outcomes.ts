import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import { publishSignerChange, recordSessionWebhook, type EsignSession, type Signer } from '../../esign/signer-side';
import { espConfig, isSignerCancellation } from '../../signing';
import { HELD_TOO_LONG } from './esp-batches';
import { EspTransaction } from './esp-transaction.entity';

/**
 * How an eSign transaction ends when it does not end signed (a timeout, the sweep behind it, a failure), and how a
 * response is refused: shared by the 2.1 and 3.2 paths and by the response route.
 */

export const TIMED_OUT = 'the eSign Service Provider did not answer in time';

/** A timed-out (or abandoned) transaction: the signer may start again; nothing is counted against them. */
export async function expire(
  tx: EntityManager,
  transaction: EspTransaction,
  why: 'timeout' | 'abandoned' = 'timeout',
): Promise<void> {
  transaction.status = 'expired';
  transaction.errorCode = why === 'timeout' ? 'esp_timeout' : 'esp_abandoned';
  transaction.errorMessage = why === 'timeout' ? TIMED_OUT : 'the signer started again';
  await tx.flush();
}

/** A transaction's prepared signatures (and a held batch's signed PDFs), no longer wanted; a store that fails to delete leaves litter, never an error. */
export async function discardPrepared(services: AppServices, transaction: Pick<EspTransaction, 'documents'>): Promise<void> {
  const keys = transaction.documents.flatMap((document) => [document.prepared_key, document.signed_key ?? []].flat());
  for (const key of keys) {
    await services.blobs
      .delete(key)
      .catch((error: unknown) => services.log.warn({ key, error }, 'prepared ESP bytes not deleted'));
  }
}

/**
 * The ESP refused (or answered with a signature that does not hold): the transaction fails and the signer loses one
 * of `max_retry` attempts; the last one fails the signer, as a wrong one-time code does. A failure that is not the
 * signer's nor the ESP's (the document moved on meanwhile) costs no attempt, and neither does the signer's own
 * Cancel at the ESP (`isSignerCancellation`: ESP-944, ESP-945): cancelling is not failing to authenticate. That one
 * is audited as `esp_cancelled`.
 */
export async function failTransaction(
  services: AppServices,
  tx: EntityManager,
  at: { session: EsignSession; signer: Signer; transaction: EspTransaction; origin: RequestOrigin },
  code: string,
  message: string,
  options: { costsAttempt: boolean } = { costsAttempt: true },
): Promise<void> {
  const { session, signer, transaction, origin } = at;
  const cancelled = isSignerCancellation(code);
  const costsAttempt = options.costsAttempt && !cancelled;
  transaction.status = 'failed';
  transaction.errorCode = code.slice(0, 64);
  transaction.errorMessage = (message || 'the eSign Service Provider refused').slice(0, 500);
  transaction.answeredAt = new Date();
  if (costsAttempt) signer.failedAttempts += 1;
  const left = Math.max(0, signer.maxRetry - signer.failedAttempts);
  if (costsAttempt && left === 0) signer.status = 'failed';
  recordAudit(tx, {
    session,
    signer,
    event: cancelled ? 'esp_cancelled' : 'esp_failed',
    origin,
    details: {
      txn: transaction.txn,
      error_code: transaction.errorCode,
      error_message: transaction.errorMessage,
      attempts_left: left,
    },
  });
  if (costsAttempt && signer.status === 'failed') {
    recordAudit(tx, { session, signer, event: 'signer_failed', origin, details: { reason: 'Aadhaar eSign attempts exhausted' } });
    await recordSessionWebhook(services, tx, { id: session.id, userId: session.user.id }, 'esign.signer.failed', signer.id);
  }
  await tx.flush();
  await publishSignerChange(services, tx, session, signer);
}

/**
 * The sweep behind timeouts: transactions no ESP answered in time, and held batches whose next batch did not come
 * in time, become `expired` and their bytes are deleted, whether or not the signer comes back. Rows another step holds are skipped (the next sweep takes them).
 * Answers how many expired.
 */
export async function expireDueEspTransactions(services: AppServices, em: EntityManager, limit: number): Promise<number> {
  const rows = await em.getConnection().execute<{ documents: EspTransaction['documents'] }[]>(
    `update esp_transactions set status = 'expired',
        error_code = case when status = 'held' then 'esp_batch_voided' else 'esp_timeout' end,
        error_message = case when status = 'held' then ? else ? end
      where txn in (select txn from esp_transactions where status in ('pending', 'held') and expires_at <= now()
                     order by expires_at limit ? for update skip locked)
      returning documents`,
    [HELD_TOO_LONG, TIMED_OUT, limit],
  );
  for (const row of rows) await discardPrepared(services, row);
  return rows.length;
}

/** What became of a response: the signer's page reads the transaction itself. */
export type EspResponseOutcome =
  | { accepted: true; txn: string; status: 'completed' | 'held' | 'failed' }
  | { accepted: false; txn: string | null; reason: string };

/**
 * A response that could not be read out of its request (esp-response-body.ts: no recognised field or body), refused
 * like any other: `reason` says what was missing, in the audit trail of the transaction the request named.
 */
export async function refuseUnreadEspResponse(
  services: AppServices,
  em: EntityManager,
  backend: string,
  txn: string | null,
  reason: string,
  origin: RequestOrigin,
): Promise<EspResponseOutcome> {
  const esp = espConfig(services, backend);
  if (!esp) return { accepted: false, txn: null, reason: `no ESP backend ${backend}` };
  return refuseEspResponse(services, em, txn, reason, origin);
}

/** A refused response: written to the audit trail of the transaction it names, when that is one of ours. */
export async function refuseEspResponse(
  services: AppServices,
  em: EntityManager,
  txn: string | null,
  reason: string,
  origin: RequestOrigin,
): Promise<EspResponseOutcome> {
  const transaction = txn ? await em.fork().findOne(EspTransaction, { txn }) : null;
  if (transaction) {
    await em.fork().transactional(async (tx) => {
      recordAudit(tx, {
        session: transaction.session,
        signer: transaction.signer,
        event: 'esp_response_refused',
        origin,
        details: { txn: transaction.txn, reason },
      });
    });
  }
  services.log.warn({ txn, reason }, 'ESP response refused');
  return { accepted: false, txn: transaction?.txn ?? null, reason };
}
