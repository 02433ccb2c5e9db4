import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EspConfig } from '../../../config';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import { lockSessionOfSigner } from '../../esign/signer-side';
import { postEspRequest } from '../../signing';
import { discardPrepared, failTransaction } from './esp-outcomes';
import { EspTransaction } from './esp-transaction.entity';

/** What /signer-api/esp/start answers: the form the signing page posts in the signer's browser. */
export interface EspStart {
  txn: string;
  esp_url: string;
  fields: Record<string, string>;
  expires_at: Date;
  /** Which of the signer's batches this transaction signs (`number` of `of`), and how many documents it carries. */
  batch: { number: number; of: number; documents: number };
}

/**
 * A 3.2 hand-over's end: the form, or why not. `failover`: the ESP did not answer, or not as an ESP must (no
 * connection, a timeout, an HTTP error, an acknowledgement that does not verify), so the next ESP of the session's
 * backend may be tried; a signed refusal is the ESP's answer to this request, and is not.
 */
export type HandOver = { ok: true; form: EspStart } | { ok: false; failover: boolean; problem: string; error: AppError };

/**
 * eSign 3.2, after the transaction is committed: this service POSTs the signed request to the ESP (bounded by
 * ESP_<NAME>_ACK_TIMEOUT_SECONDS, no lock held meanwhile) and reads its signed acknowledgement. Accepted, the
 * transaction keeps the ESP's resCode and the signer's browser is sent to the ESP's authentication page with
 * `txnref` (the form answered). Anything else fails the transaction with the ESP's errCode and errMsg (or
 * `esp_unreachable` / `esp_ack_invalid`) with a `503 service_unavailable` to answer (esp-failover.ts tries the
 * next ESP first, when there is one): the signer has not authenticated yet, so no refusal at this point costs an
 * attempt, whoever's fault it was (docs/signing.md).
 */
export async function handOverThroughServer(
  services: AppServices,
  em: EntityManager,
  esp: EspConfig,
  started: EspStart & { xml: string },
  origin: RequestOrigin,
): Promise<HandOver> {
  const ack = await postEspRequest(services, em, esp, { txn: started.txn, xml: started.xml });
  const outcome = await em.fork().transactional(async (tx) => {
    const known = await tx.findOneOrFail(EspTransaction, { txn: started.txn });
    // The session first, then the transaction: the order every step that touches both takes.
    const { session, signer } = await lockSessionOfSigner(tx, { sessionId: known.session.id, signerId: known.signer.id });
    const transaction = await tx.findOneOrFail(
      EspTransaction,
      { txn: started.txn },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    // Replaced meanwhile (the signer started again from another tab), answered or timed out: nothing to hand over.
    if (transaction.status !== 'pending' || transaction.expiresAt <= new Date()) return 'gone' as const;
    if (ack.accepted) {
      transaction.responseCode = ack.resCode.slice(0, 100);
      recordAudit(tx, {
        session,
        signer,
        event: 'esp_acknowledged',
        origin,
        details: { backend: esp.name, txn: transaction.txn, res_code: ack.resCode },
      });
      await tx.flush();
      return 'accepted' as const;
    }
    await failTransaction(services, tx, { session, signer, transaction, origin }, ack.code, ack.message, {
      costsAttempt: false,
    });
    return 'failed' as const;
  });
  if (outcome === 'accepted' && ack.accepted) {
    const form = { txn: started.txn, esp_url: ack.url, fields: ack.fields, expires_at: started.expires_at, batch: started.batch };
    return { ok: true, form };
  }
  if (outcome === 'gone') {
    throw new AppError('conflict', { message: `eSign transaction ${started.txn} is no longer open: start again` });
  }
  const known = await em.fork().findOne(EspTransaction, { txn: started.txn });
  if (known) await discardPrepared(services, known);
  const refusal = ack.accepted ? null : ack;
  const error = new AppError('service_unavailable', {
    message: refusal?.refusedByEsp
      ? `the eSign Service Provider refused the request: ${refusal.message}`
      : `the eSign Service Provider did not take the request: ${refusal?.message ?? 'no acknowledgement'}`,
    errors: [{ field: 'esp', problem: `${refusal?.code ?? 'esp_unreachable'}: ${refusal?.message ?? ''}` }],
  });
  return { ok: false, failover: !refusal?.refusedByEsp, problem: refusal?.message ?? 'no acknowledgement', error };
}
