import { randomBytes } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import {
  assertFieldsComplete,
  isSignersTurn,
  lockSessionOfSigner,
  documentsOf,
  lockTurn,
  Signer,
  signerByToken,
} from '../../esign/signer-side';
import {
  checkReturnedSignature,
  claimedTxn,
  espConfig,
  EsignXmlError,
  fillSignature,
  nameMatchScore,
  readAadhaarCertDetails,
  readEspResponse,
  timestampSignature,
  type KnownRevocation,
  type ParsedEsignResponse,
} from '../../signing';
import { assertChecksPassed } from '../checks/checks';
import { handOverThroughServer, type EspStart } from './esp-handoff';
import { discardPrepared, expire, failTransaction, refuseEspResponse, type EspResponseOutcome } from './esp-outcomes';
import { EspTransaction, type EspDocumentHash } from './esp-transaction.entity';
import { prepareSignatures, requestForEsp } from './esp-request';
import { completesOnNextSignature, recordSignedRevision, revocationBeforeCompletion } from '../sign-in-turn';

export { ESP_RESPONSE_PATH } from './esp-request';
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
  let discarded: EspTransaction | undefined;
  const started = await em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    if (signer.signType !== 'aadhaar') throw new AppError('conflict', { message: `this signer signs with ${signer.signType}` });
    assertChecksPassed(signer);
    assertFieldsComplete(signer);
    const esp = espConfig(services, session.backend);
    if (!esp) throw new AppError('conflict', { message: `signing backend ${session.backend} is not available` });

    const now = new Date();
    const open = await closeOpenTransaction(tx, signer, input.restart === true, now);
    if (open) discarded = open;

    const txn = `esptxn_${randomBytes(16).toString('hex')}`;
    const documents = await prepareSignatures(services, tx, session, signer, txn, now);
    const transaction = tx.create(EspTransaction, {
      txn,
      session: session.id,
      signer: signer.id,
      signerTokenHash: signer.tokenHash,
      backend: esp.name,
      documents,
      signingTime: now,
      expiresAt: new Date(now.getTime() + esp.timeoutSeconds * 1000),
    });
    const request = await requestForEsp(services, tx, esp, { session, signer, txn, documents });
    recordAudit(tx, {
      session,
      signer,
      event: 'esp_request_sent',
      origin,
      details: {
        backend: esp.name,
        version: request.version,
        txn,
        input_hash: documents[0]!.input_hash,
        ...(documents.length > 1 && {
          documents: documents.map((document) => ({ document_id: document.document_id, input_hash: document.input_hash })),
        }),
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

type TurnOf = Awaited<ReturnType<typeof lockTurn>>;

/**
 * The signer's open transaction, if any: refused while it runs (unless `restart`, or it was started by a person
 * whose place was handed over since), else expired (timed out, or abandoned by the restart). Answers the one
 * closed, whose prepared bytes go once the new start is committed.
 */
async function closeOpenTransaction(
  tx: EntityManager,
  signer: TurnOf['signer'],
  restart: boolean,
  now: Date,
): Promise<EspTransaction | null> {
  const open = await tx.findOne(EspTransaction, { signer: signer.id, status: 'pending' });
  // A transaction started by a person whose place was handed over since is not the new person's to wait on.
  const startedByThisPerson = !open?.signerTokenHash || open.signerTokenHash === signer.tokenHash;
  if (open && open.expiresAt > now && !restart && startedByThisPerson) {
    const retryAfter = Math.ceil((open.expiresAt.getTime() - now.getTime()) / 1000);
    throw new AppError('conflict', {
      message: `an eSign transaction of this signer is open until ${open.expiresAt.toISOString()}: finish it at the ESP, or start again (restart: true)`,
      errors: [{ field: 'restart', problem: `an eSign transaction is open for ${retryAfter} more second(s)` }],
    });
  }
  if (open) await expire(tx, open, open.expiresAt > now ? 'abandoned' : 'timeout');
  return open;
}

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
  const returned = response.status === '1' ? response.signatures.filter((candidate) => candidate.cms.length > 0) : [];
  if (returned.length === 0 || known.status !== 'pending') return undefined;
  const signer = await em.fork().findOneOrFail(Signer, { id: known.signer.id }, { populate: ['session'] });
  if (!(await completesOnNextSignature(services, em, signer.session))) return undefined;
  return revocationBeforeCompletion(services, em, signer.session, { cms: returned.map((signature) => signature.cms) });
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
    return refuseEspResponse(
      services,
      em,
      claimedTxn(xml),
      `the response does not verify as ${esp.name}'s: ${error.message}`,
      origin,
    );
  }
  const known = await em.fork().findOne(EspTransaction, { txn: response.txn });
  if (!known || known.backend !== esp.name)
    return refuseEspResponse(services, em, null, `no transaction ${response.txn} with ${esp.name}`, origin);

  const knownRevocation = await revocationBeforeEspCompletion(services, em, known, response);
  const outcome = await em.transactional(async (tx): Promise<EspAnswer> => {
    // The session first, then the transaction: the order every step that touches both takes.
    const { session, signer } = await lockSessionOfSigner(tx, { sessionId: known.session.id, signerId: known.signer.id });
    const transaction = await tx.findOneOrFail(
      EspTransaction,
      { txn: response.txn },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    const now = new Date();
    const notOpen = await notAnswerable(tx, transaction, response, now);
    if (notOpen) return notOpen;
    const at = { session, signer, transaction, origin };
    const checked = await failedAnswer(services, tx, at, response);
    if ('accepted' in checked) return checked;
    const signed = new Map<number, Uint8Array>();
    for (const { document, cms, prepared } of checked.signed) {
      signed.set(
        document.position,
        fillSignature(
          { updated: prepared, contentsAt: document.contents_at, contentsEnd: document.contents_end },
          await timestampSignature(services.config.tsa, cms),
        ),
      );
    }
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
  if (!('keepsBytes' in outcome)) await discardPrepared(services, known);
  if ('retry' in outcome) return refuseEspResponse(services, em, response.txn, outcome.retry, origin);
  return outcome;
}

/** `keepsBytes`: the one refusal after which the transaction is still pending (a stale ts; a current answer may follow). */
type EspAnswer = EspResponseOutcome | { retry: string; keepsBytes?: true };
type AnswerAt = Parameters<typeof failTransaction>[2];

/**
 * A response to a transaction that is not open to one (abandoned, timed out, answered already), or whose `ts` is
 * not current: the refusal. A pending transaction found past its time expires here.
 */
async function notAnswerable(
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
 * are signed together or not at all), a document that moved on, prepared bytes that are gone. Otherwise each
 * returned signature with its document and the prepared PDF it goes into.
 */
async function failedAnswer(services: AppServices, tx: EntityManager, at: AnswerAt, response: ParsedEsignResponse) {
  const { session, signer, transaction } = at;
  const failed = async (code: string, message: string, options?: { costsAttempt: boolean }) => {
    await failTransaction(services, tx, at, code, message, options);
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
  const signed: { document: EspDocumentHash; cms: Uint8Array; prepared: Buffer }[] = [];
  for (const { document, signature } of returned) {
    const prepared = await services.blobs.getBytes(document.prepared_key).catch(() => null);
    if (!prepared || prepared.length < document.contents_end) {
      // Not expected (the bytes go only with a transaction that is over), but never half a signature nor a 500.
      return failed('prepared_missing', 'the prepared document is gone; sign again', { costsAttempt: false });
    }
    signed.push({ document, cms: signature!.cms, prepared });
  }
  return { signed };
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
