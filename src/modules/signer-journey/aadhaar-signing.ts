import { createHash, randomBytes } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { recordAudit, type RequestOrigin } from '../audit';
import { isSignersTurn, lockSessionOfSigner, lockTurn, Signer, signerByToken } from '../esign';
import {
  buildEspRequest,
  checkReturnedSignature,
  claimedTxn,
  espConfig,
  EsignXmlError,
  fillSignature,
  isSignerCancellation,
  nameMatchScore,
  readAadhaarCertDetails,
  readEspResponse,
  timestampSignature,
  type KnownRevocation,
  type ParsedEsignResponse,
  type PreparedSignature,
} from '../signing';
import { assertChecksPassed } from './checks/checks';
import { handOverThroughServer, type EspStart } from './esp-handoff';
import { discardPrepared, expire, failTransaction, TIMED_OUT } from './esp-outcomes';
import { EspTransaction } from './esp-transaction.entity';
import { SIGNER_RETURN_PATH } from './page/signer-page';
import { ensurePrepared } from './prepare-document';
import { completesOnNextSignature, recordSignedRevision, revocationBeforeCompletion, signerAppearance } from './sign-in-turn';

/** Where ESPs send responses (`responseUrl`), under PUBLIC_URL; signers come back to SIGNER_RETURN_PATH. */
export const ESP_RESPONSE_PATH = '/esp/response';
/** A response whose `ts` is further from now than this is refused (clocks of ASP and ESP may differ a little). */
const RESPONSE_CLOCK_SKEW_MS = 10 * 60_000;

/**
 * Aadhaar, step 1 (CCA eSign API): the signer whose turn it is consents; the signature's incremental update is
 * prepared over the current PDF and its byte range hashed; the signed `<Esign>` request for that hash is answered
 * as the form the signing page posts to the session's ESP (2.1), or POSTed by this service to the ESP and, once
 * acknowledged, the form that takes the browser to the ESP's authentication page answered (3.2, esp-handoff.ts). The ESP authenticates the holder on its own pages
 * (Aadhaar number, OTP or biometric) and answers `acceptEspResponse`. One open transaction per signer: another
 * start waits until it is answered or times out, unless it says `restart: true` (the signer left the ESP's pages
 * and starts over): the open one is then abandoned, and an answer to it refused, at no cost to the signer.
 */
export async function startAadhaarEsign(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { consent?: boolean | null; restart?: boolean | null },
  origin: RequestOrigin,
): Promise<EspStart> {
  const found = await signerByToken(em, token);
  if (input.consent !== true)
    throw AppError.badRequest([{ field: 'consent', problem: 'the signer must consent to sign (consent: true)' }]);
  let discarded: string | undefined;
  const started = await em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    if (signer.signType !== 'aadhaar') throw new AppError('conflict', { message: `this signer signs with ${signer.signType}` });
    assertChecksPassed(signer);
    const esp = espConfig(services, session.backend);
    if (!esp) throw new AppError('conflict', { message: `signing backend ${session.backend} is not available` });

    const now = new Date();
    const open = await tx.findOne(EspTransaction, { signer: signer.id, status: 'pending' });
    // A transaction started by a person whose place was handed over since is not the new person's to wait on.
    const startedByThisPerson = !open?.signerTokenHash || open.signerTokenHash === signer.tokenHash;
    if (open && open.expiresAt > now && input.restart !== true && startedByThisPerson) {
      const retryAfter = Math.ceil((open.expiresAt.getTime() - now.getTime()) / 1000);
      throw new AppError('conflict', {
        message: `an eSign transaction of this signer is open until ${open.expiresAt.toISOString()}: finish it at the ESP, or start again (restart: true)`,
        errors: [{ field: 'restart', problem: `an eSign transaction is open for ${retryAfter} more second(s)` }],
      });
    }
    if (open) {
      await expire(tx, open, open.expiresAt > now ? 'abandoned' : 'timeout');
      discarded = open.preparedKey;
    }

    const working = await ensurePrepared(services, tx, session);
    const update = await services.untrusted.run<PreparedSignature>('buildSignatureUpdateTask', {
      pdf: working,
      appearance: signerAppearance(signer, now),
    });
    const { updated, contentsAt, contentsEnd } = update;
    const inputHash = createHash('sha256')
      .update(updated.subarray(0, contentsAt))
      .update(updated.subarray(contentsEnd))
      .digest('hex');
    const txn = `esptxn_${randomBytes(16).toString('hex')}`;
    const preparedKey = `esp/${txn}.pdf`;
    await services.blobs.putBytes(preparedKey, updated, 'application/pdf');
    const transaction = tx.create(EspTransaction, {
      txn,
      session: session.id,
      signer: signer.id,
      signerTokenHash: signer.tokenHash,
      backend: esp.name,
      inputHash,
      preparedKey,
      contentsAt,
      contentsEnd,
      baseFileId: session.currentPdfFile.id,
      signingTime: now,
      expiresAt: new Date(now.getTime() + esp.timeoutSeconds * 1000),
    });
    const request = await buildEspRequest(services, tx, esp, {
      txn,
      sha256Hex: inputHash,
      docInfo: `${session.filename} (${session.id})`,
      // 3.2: what the ESP may fetch to show the signer: the prepared PDF only, by a signed link that lapses with
      // the transaction (and whose bytes go when it ends).
      docUrl: services.urls.issue(
        { key: preparedKey, filename: session.filename, contentType: 'application/pdf' },
        esp.timeoutSeconds,
      ).url,
      authMode: signer.authMode,
      responseUrl: `${services.config.publicUrl}${ESP_RESPONSE_PATH}/${esp.name}`,
      redirectUrl: `${services.config.publicUrl}${SIGNER_RETURN_PATH}?txn=${txn}`,
    });
    recordAudit(tx, {
      session,
      signer,
      event: 'esp_request_sent',
      origin,
      details: {
        backend: esp.name,
        version: request.version,
        txn,
        input_hash: inputHash,
        auth_mode: signer.authMode,
        ...(open && { replaces_txn: open.txn }),
      },
    });
    await tx.flush();
    const form = { txn, esp_url: request.url, fields: request.fields, expires_at: transaction.expiresAt };
    return { esp, form, xml: request.xml };
  });
  // Bytes go once the rows that name them are committed: a rolled-back step leaves its transaction whole.
  if (discarded) await discardPrepared(services, discarded);
  // 3.2: the request goes from this server to the ESP, and the browser to the ESP's page once it is acknowledged.
  if (started.esp.version === '3.2')
    return handOverThroughServer(services, em, started.esp, { ...started.form, xml: started.xml }, origin);
  return started.form;
}

/** What became of a response: the signer's page reads the transaction itself. */
export type EspResponseOutcome =
  { accepted: true; txn: string; status: 'completed' | 'failed' } | { accepted: false; txn: string | null; reason: string };

/**
 * When an ESP's signature would complete its session: the revocation of the certificates the document and the
 * returned signature carry, looked up before the transaction (revocationBeforeCompletion).
 */
async function revocationBeforeEspCompletion(
  services: AppServices,
  em: EntityManager,
  known: EspTransaction,
  response: ParsedEsignResponse,
): Promise<KnownRevocation | undefined> {
  const returned = response.status === '1' ? response.signatures.find((candidate) => candidate.id === '1') : undefined;
  if (!returned?.cms || known.status !== 'pending') return undefined;
  const signer = await em.fork().findOneOrFail(Signer, { id: known.signer.id }, { populate: ['session'] });
  if (!(await completesOnNextSignature(services, em, signer.session))) return undefined;
  const prepared = await services.blobs.getBytes(known.preparedKey).catch(() => null);
  if (!prepared) return undefined;
  return revocationBeforeCompletion(services, em, signer.session, { pdf: prepared, cms: [returned.cms] });
}

/**
 * Aadhaar, step 2: the ESP's `<EsignResp>` for a transaction. Refused (and written to the transaction's audit
 * trail when it names one of ours): a response whose XML signature is not the configured ESP's, for an unknown
 * or another backend's txn, for a transaction answered already (a replay) or timed out (late), or whose `ts` is
 * not current. An ESP error (`status="0"`) fails the transaction and costs one of the signer's `max_retry`
 * attempts. A success must carry a PKCS#7 that signs exactly the InputHash with the returned certificate; it is
 * then embedded into the prepared PDF as the signer's PAdES signature (time-stamped, and completing the document
 * when it is the last), in one transaction with the session locked: the signature is recorded whole or not at all.
 */
export async function acceptEspResponse(
  services: AppServices,
  em: EntityManager,
  backend: string,
  xml: string,
  origin: RequestOrigin,
): Promise<EspResponseOutcome> {
  const esp = espConfig(services, backend);
  if (!esp) return { accepted: false, txn: null, reason: `no ESP backend ${backend}` };
  let response: ParsedEsignResponse;
  try {
    response = await readEspResponse(services, em, esp, xml);
  } catch (error) {
    if (!(error instanceof EsignXmlError)) throw error;
    return refuse(services, em, claimedTxn(xml), `the response does not verify as ${esp.name}'s: ${error.message}`, origin);
  }
  const known = await em.fork().findOne(EspTransaction, { txn: response.txn });
  if (!known || known.backend !== esp.name)
    return refuse(services, em, null, `no transaction ${response.txn} with ${esp.name}`, origin);

  const knownRevocation = await revocationBeforeEspCompletion(services, em, known, response);
  // `keepsBytes`: the one refusal after which the transaction is still pending (a stale ts; a current answer may follow).
  const outcome = await em.transactional(async (tx): Promise<EspResponseOutcome | { retry: string; keepsBytes?: true }> => {
    // The session first, then the transaction: the order every step that touches both takes.
    const { session, signer } = await lockSessionOfSigner(tx, { sessionId: known.session.id, signerId: known.signer.id });
    const transaction = await tx.findOneOrFail(
      EspTransaction,
      { txn: response.txn },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    const now = new Date();
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
    if (transaction.signerTokenHash && transaction.signerTokenHash !== signer.tokenHash) {
      // Whatever the ESP says (a signature or an error) is about the person who left; the one who came is not charged.
      await failTransaction(
        services,
        tx,
        { session, signer, transaction, origin },
        'signer_replaced',
        'the signer was replaced (reassigned or delegated) while the ESP was signing: nothing is recorded',
        { costsAttempt: false },
      );
      return { accepted: true, txn: transaction.txn, status: 'failed' };
    }
    if (response.status !== '1') {
      await failTransaction(
        services,
        tx,
        { session, signer, transaction, origin },
        response.errCode || 'esp_error',
        response.errMsg,
      );
      return { accepted: true, txn: transaction.txn, status: 'failed' };
    }
    const signature = response.signatures.find((candidate) => candidate.id === '1' && candidate.error === '');
    const problems = signature
      ? checkReturnedSignature(signature.cms, transaction.inputHash, response.userCertificatePem)
      : ['no signature of InputHash 1'];
    if (problems.length > 0) {
      await failTransaction(services, tx, { session, signer, transaction, origin }, 'esp_signature_invalid', problems.join('; '));
      return { accepted: true, txn: transaction.txn, status: 'failed' };
    }
    if (!isSignersTurn(session, signer) || session.currentPdfFile.id !== transaction.baseFileId) {
      // The session ended, or another signature landed first (parallel signing): this one is over another revision.
      await failTransaction(
        services,
        tx,
        { session, signer, transaction, origin },
        'document_changed',
        'the document changed while the ESP was signing; sign again',
        { costsAttempt: false },
      );
      return { accepted: true, txn: transaction.txn, status: 'failed' };
    }

    const prepared = await services.blobs.getBytes(transaction.preparedKey).catch(() => null);
    if (!prepared || prepared.length < transaction.contentsEnd) {
      // Not expected (the bytes go only with a transaction that is over), but never half a signature nor a 500.
      await failTransaction(
        services,
        tx,
        { session, signer, transaction, origin },
        'prepared_missing',
        'the prepared document is gone; sign again',
        { costsAttempt: false },
      );
      return { accepted: true, txn: transaction.txn, status: 'failed' };
    }
    const signed = fillSignature(
      { updated: prepared, contentsAt: transaction.contentsAt, contentsEnd: transaction.contentsEnd },
      await timestampSignature(services.config.tsa, signature!.cms),
    );
    recordAadhaarIdentity(signer, response.userCertificatePem);
    transaction.status = 'completed';
    transaction.responseCode = response.resCode.slice(0, 100);
    transaction.answeredAt = now;
    await recordSignedRevision(services, tx, {
      session,
      signer,
      signed,
      time: transaction.signingTime,
      origin,
      knownRevocation,
    });
    return { accepted: true, txn: transaction.txn, status: 'completed' };
  });
  // The prepared bytes are spent or useless now, whatever the outcome, unless the transaction is still pending.
  if (!('keepsBytes' in outcome)) await discardPrepared(services, known.preparedKey);
  if ('retry' in outcome) return refuse(services, em, response.txn, outcome.retry, origin);
  return outcome;
}

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
  return refuse(services, em, txn, reason, origin);
}

/** A refused response: written to the audit trail of the transaction it names, when that is one of ours. */
async function refuse(
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

/**
 * The sweep behind timeouts: transactions no ESP answered in time become `expired` and their prepared bytes are
 * deleted, whether or not the signer comes back. Rows another step holds are skipped (the next sweep takes them).
 * Answers how many expired.
 */
export async function expireDueEspTransactions(services: AppServices, em: EntityManager, limit: number): Promise<number> {
  const rows = await em.getConnection().execute<{ prepared_key: string }[]>(
    `update esp_transactions set status = 'expired', error_code = 'esp_timeout', error_message = ?
      where txn in (select txn from esp_transactions where status = 'pending' and expires_at <= now()
                     order by expires_at limit ? for update skip locked)
      returning prepared_key`,
    [TIMED_OUT, limit],
  );
  for (const row of rows) await discardPrepared(services, row.prepared_key);
  return rows.length;
}

/**
 * What the ESP's certificate says about the holder (any ESP's: a detail its subject lacks is null), and how well
 * its name (CN) matches the one expected; with no name to score, the match is `unavailable`. Never left pending.
 */
export function recordAadhaarIdentity(signer: Signer, certificatePem: string): void {
  const details = readAadhaarCertDetails(certificatePem);
  signer.aadhaarCertDetails = details;
  if (!signer.nameMatch.enforce) return;
  signer.nameMatch = details.name
    ? {
        ...signer.nameMatch,
        signer_name: details.name,
        score: nameMatchScore(details.name, signer.nameMatch.prefill_name ?? signer.fullName),
        status: 'completed',
      }
    : { ...signer.nameMatch, signer_name: null, score: null, status: 'unavailable' };
}

/** The signer's latest eSign transaction, as the signer's view shows it. */
export async function latestEspTransaction(em: EntityManager, signerId: string) {
  const latest = await em.findOne(EspTransaction, { signer: signerId }, { orderBy: { createdAt: 'desc' } });
  if (!latest) return null;
  const expired = latest.status === 'pending' && latest.expiresAt <= new Date();
  return {
    txn: latest.txn,
    status: expired ? ('expired' as const) : latest.status,
    error_code: expired ? 'esp_timeout' : (latest.errorCode ?? null),
    error_message: expired ? TIMED_OUT : (latest.errorMessage ?? null),
    // The signer cancelled at the ESP (a failed transaction that cost no attempt): the page says so in the second person.
    cancelled_by_signer: latest.status === 'failed' && isSignerCancellation(latest.errorCode),
    expires_at: latest.expiresAt,
  };
}
