import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import { lockTurn, publishSignerChange, recordSessionWebhook, type Signer } from '../../esign/signer-side';
import type { DscRefusal } from '../../signing';
import { DscTransaction, type DscDocumentDigest } from './dsc-transaction.entity';

/**
 * How a DSC signature ends when it does not end signed (a refused certificate, a token signature that does not verify,
 * a new start, a timeout), and what the signer's view shows of the latest one.
 */

/**
 * A certificate the checks refused: audited, and when the signer brought it (an untrusted, expired, revoked one, one
 * not for signing, another person's, not the pinned one) it costs one of `max_retry` attempts, the last failing the
 * signer. The refusal is then answered with its own code (docs/api.md).
 */
export async function refuseCertificate(
  services: AppServices,
  em: EntityManager,
  found: Signer,
  refusal: DscRefusal,
  origin: RequestOrigin,
): Promise<never> {
  const left = await em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    if (refusal.signersDoing) signer.failedAttempts += 1;
    const attemptsLeft = Math.max(0, signer.maxRetry - signer.failedAttempts);
    if (refusal.signersDoing && attemptsLeft === 0) signer.status = 'failed';
    recordAudit(tx, {
      session,
      signer,
      event: 'dsc_refused',
      origin,
      details: {
        error_code: refusal.code,
        error_message: refusal.message,
        counted: refusal.signersDoing,
        attempts_left: attemptsLeft,
      },
    });
    if (signer.status === 'failed') {
      recordAudit(tx, { session, signer, event: 'signer_failed', origin, details: { reason: 'DSC signing attempts exhausted' } });
      await recordSessionWebhook(services, tx, { id: session.id, userId: session.user.id }, 'esign.signer.failed', signer.id);
    }
    await tx.flush();
    await publishSignerChange(services, tx, session, signer);
    return attemptsLeft;
  });
  // As a wrong one-time code does, the problem says what is left when it cost an attempt.
  const attemptsNote = refusal.signersDoing ? ` (${left} attempt(s) left)` : '';
  throw new AppError(refusal.code, { errors: [{ field: 'certificate', problem: `${refusal.message}${attemptsNote}` }] });
}

/** A token signature that does not verify with the transaction's certificate: the transaction fails, no attempt counted. */
export async function refuseSignature(
  services: AppServices,
  em: EntityManager,
  found: Signer,
  known: DscTransaction,
  position: number,
  origin: RequestOrigin,
): Promise<never> {
  const problem = `the signature for the document at position ${position} does not verify with the certificate chosen`;
  await em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    const transaction = await tx.findOneOrFail(
      DscTransaction,
      { txn: known.txn },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (transaction.status !== 'pending') return;
    transaction.status = 'failed';
    transaction.errorCode = 'dsc_signature_invalid';
    transaction.errorMessage = problem;
    transaction.answeredAt = new Date();
    recordAudit(tx, {
      session,
      signer,
      event: 'dsc_refused',
      origin,
      details: { txn: known.txn, error_code: 'dsc_signature_invalid', error_message: problem, counted: false },
    });
    await tx.flush();
  });
  await discardPrepared(services, known);
  throw new AppError('dsc_signature_invalid', { errors: [{ field: 'signatures', problem }] });
}

/** The signer's open transactions end when they start again: their prepared bytes go once the new start commits. */
export async function closeOpenTransactions(tx: EntityManager, signer: Signer): Promise<DscTransaction[]> {
  const open = await tx.find(DscTransaction, { signer: signer.id, status: 'pending' });
  for (const transaction of open) {
    transaction.status = 'expired';
    transaction.errorCode = transaction.expiresAt <= new Date() ? 'dsc_timeout' : 'dsc_abandoned';
    transaction.errorMessage =
      transaction.errorCode === 'dsc_timeout' ? 'the token did not sign in time' : 'the signer started again';
  }
  return open;
}

/** Prepared updates no longer wanted; a store that fails to delete leaves litter, never an error. */
export async function discardPrepared(services: AppServices, transaction: Pick<DscTransaction, 'documents'>): Promise<void> {
  for (const document of transaction.documents) {
    await services.blobs
      .delete(document.prepared_key)
      .catch((error: unknown) => services.log.warn({ key: document.prepared_key, error }, 'prepared DSC bytes not deleted'));
  }
}

/** The sweep behind timeouts: pending DSC transactions past their time expire and their bytes go. */
export async function expireDueDscTransactions(services: AppServices, em: EntityManager, limit: number): Promise<number> {
  const rows = await em.getConnection().execute<{ documents: DscDocumentDigest[] }[]>(
    `update dsc_transactions set status = 'expired', error_code = 'dsc_timeout', error_message = 'the token did not sign in time'
      where txn in (select txn from dsc_transactions where status = 'pending' and expires_at <= now()
                     order by expires_at limit ? for update skip locked)
      returning documents`,
    [limit],
  );
  for (const row of rows) await discardPrepared(services, row);
  return rows.length;
}

/** The signer's latest DSC transaction, as the signer's view shows it. */
export async function latestDscTransaction(em: EntityManager, signerId: string) {
  const latest = await em.findOne(DscTransaction, { signer: signerId }, { orderBy: { createdAt: 'desc' } });
  if (!latest) return null;
  const lapsed = latest.status === 'pending' && latest.expiresAt <= new Date();
  return {
    txn: latest.txn,
    status: lapsed ? ('expired' as const) : latest.status,
    error_code: lapsed ? 'dsc_timeout' : (latest.errorCode ?? null),
    expires_at: latest.expiresAt,
  };
}
