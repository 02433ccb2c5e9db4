import { randomBytes } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../../platform/errors';
import type { EspConfig } from '../../../config';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import { assertFieldsComplete, lockSessionOfSigner, lockTurn, Signer, signerByToken } from '../../esign/signer-side';
import {
  claimedTxn,
  espConfig,
  espRoute,
  recordEspOutcome,
  EsignXmlError,
  fillSignature,
  readAadhaarCertDetails,
  readEspResponse,
  timestampSignature,
  type KnownRevocation,
  type ParsedEsignResponse,
} from '../../signing';
import { assertChecksPassed } from '../checks/checks';
import { recordCertificateName } from '../certificate-name';
import { failedAnswer, notAnswerable, type EspAnswer } from './esp-answer-checks';
import { heldBatchesOf, heldSignatures, holdBatch, keepHeldFor, nextBatch } from './esp-batches';
import type { EspStart } from './esp-handoff';
import { auditEspFailures, backendOfOpenTransaction, startOnRoute, type EspFailure, type EspStartAnswer } from './esp-failover';
import { discardPrepared, expire, refuseEspResponse, type EspResponseOutcome } from './esp-outcomes';
import { prepareSignatures, requestForEsp } from './esp-request';
import { EspTransaction, type EspDocumentHash } from './esp-transaction.entity';
import { completesOnNextSignature, recordSignedRevision, revocationBeforeCompletion } from '../sign-in-turn';

export { ESP_RESPONSE_PATH } from './esp-request';

/**
 * Aadhaar, step 1 (CCA eSign API): the signer whose turn it is consents; the signature's incremental update is
 * prepared over the current PDF and its byte range hashed; the signed `<Esign>` request for that hash is answered
 * as the form the signing page posts to the ESP (2.1), or POSTed by this service to the ESP and, once
 * acknowledged, the form that takes the browser to the ESP's authentication page answered (3.2, esp-handoff.ts).
 * The ESP is the first of the session's backend that answers (esp-failover.ts). The ESP authenticates the holder on
 * its own pages (Aadhaar number, OTP or biometric) and answers `acceptEspResponse`. One open transaction per
 * signer: another start waits until it is answered or times out, unless it says `restart: true` (the signer left
 * the ESP's pages and starts over): the open one is then abandoned, and an answer to it refused, at no cost to the
 * signer; with `esp_unreachable: true` as well, the ESP the signer's browser could not reach is passed over.
 */
export async function startAadhaarEsign(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { consent?: boolean | null; restart?: boolean | null; esp_unreachable?: boolean | null },
  origin: RequestOrigin,
): Promise<EspStartAnswer> {
  const found = await signerByToken(em, token);
  if (input.consent !== true)
    throw AppError.badRequest([{ field: 'consent', problem: 'the signer must consent to sign (consent: true)' }]);
  if (found.signType !== 'aadhaar') throw new AppError('conflict', { message: `this signer signs with ${found.signType}` });
  const route = espRoute(services, found.session.backend);
  if (!route) throw new AppError('conflict', { message: `signing backend ${found.session.backend} is not available` });
  const signerCouldNotReach =
    input.restart === true && input.esp_unreachable === true ? await backendOfOpenTransaction(em, found) : null;
  return startOnRoute(services, em, { signer: found, route, origin, signerCouldNotReach }, (esp, passedOver) =>
    openEspTransaction(services, em, { found, esp, restart: input.restart === true, passedOver, origin }),
  );
}

/** One transaction with one ESP: the signatures prepared, the request signed, the start audited, all committed together. */
async function openEspTransaction(
  services: AppServices,
  em: EntityManager,
  at: { found: Signer; esp: EspConfig; restart: boolean; passedOver: EspFailure[]; origin: RequestOrigin },
): Promise<{ form: EspStart; xml: string }> {
  const { found, esp, origin } = at;
  const discarded: EspTransaction[] = [];
  const started = await em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    if (signer.signType !== 'aadhaar') throw new AppError('conflict', { message: `this signer signs with ${signer.signType}` });
    assertChecksPassed(signer);
    assertFieldsComplete(signer);

    const now = new Date();
    const open = await closeOpenTransaction(tx, signer, at.restart, now);
    if (open) discarded.push(open);
    const next = await nextBatch(tx, { session, signer, origin }, now);
    discarded.push(...next.voided);

    const txn = `esptxn_${randomBytes(16).toString('hex')}`;
    const documents = await prepareSignatures(services, tx, session, signer, { txn, now, only: next.positions });
    const transaction = tx.create(EspTransaction, {
      txn,
      session: session.id,
      signer: signer.id,
      signerTokenHash: signer.tokenHash,
      backend: esp.name,
      documents,
      batch: next.batch,
      batchCount: next.batchCount,
      signingTime: now,
      expiresAt: new Date(now.getTime() + esp.timeoutSeconds * 1000),
    });
    keepHeldFor(next.held, transaction);
    const request = await requestForEsp(services, tx, esp, { session, signer, txn, documents });
    auditEspFailures(tx, { session, signer, origin }, at.passedOver);
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
        ...(next.batchCount > 1 && { batch: next.batch, batch_count: next.batchCount }),
        ...(open && { replaces_txn: open.txn }),
      },
    });
    await tx.flush();
    const form = {
      txn,
      esp_url: request.url,
      fields: request.fields,
      expires_at: transaction.expiresAt,
      batch: { number: next.batch, of: next.batchCount, documents: documents.length },
    };
    return { form, xml: request.xml };
  });
  // Bytes go once the rows that name them are committed: a rolled-back step leaves its transaction whole.
  for (const transaction of discarded) await discardPrepared(services, transaction);
  return started;
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
  if (returned.length === 0 || known.status !== 'pending' || known.batch < known.batchCount) return undefined;
  const reader = em.fork();
  const signer = await reader.findOneOrFail(Signer, { id: known.signer.id }, { populate: ['session'] });
  if (!(await completesOnNextSignature(services, em, signer.session))) return undefined;
  const held = heldSignatures(await heldBatchesOf(reader, signer));
  return revocationBeforeCompletion(services, em, signer.session, {
    cms: [...held, ...returned.map((signature) => signature.cms)],
  });
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
  // A response that verifies as this ESP's: it answers, whatever the response says.
  if (!esp.builtIn) await recordEspOutcome(services, em, esp.name, { ok: true });
  const known = await em.fork().findOne(EspTransaction, { txn: response.txn });
  if (!known || known.backend !== esp.name)
    return refuseEspResponse(services, em, null, `no transaction ${response.txn} with ${esp.name}`, origin);

  const knownRevocation = await revocationBeforeEspCompletion(services, em, known, response);
  /** Other transactions whose bytes go once this step is committed: held batches recorded or voided. */
  const spent: EspTransaction[] = [];
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
    const checked = await failedAnswer(services, tx, at, response, spent);
    if ('accepted' in checked) return checked;
    const { signed, cmsOf } = await signedPdfs(services, checked.signed);
    transaction.responseCode = response.resCode.slice(0, 100);
    if (transaction.batch < transaction.batchCount) {
      const answer = { signed, cms: cmsOf, certificatePem: response.userCertificatePem, timeoutSeconds: esp.timeoutSeconds };
      await holdBatch(services, tx, at, answer);
      return { accepted: true, txn: transaction.txn, status: 'held' };
    }
    for (const [position, bytes] of checked.heldSigned) signed.set(position, bytes);
    for (const batch of checked.held) batch.status = 'completed';
    spent.push(...checked.held);
    recordAadhaarIdentity(signer, response.userCertificatePem);
    transaction.status = 'completed';
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
  for (const transaction of spent) await discardPrepared(services, transaction);
  if ('retry' in outcome) return refuseEspResponse(services, em, response.txn, outcome.retry, origin);
  return outcome;
}

/** Each returned signature time-stamped and filled into its prepared PDF: the signed PDFs and the signatures, by position. */
async function signedPdfs(services: AppServices, returned: { document: EspDocumentHash; cms: Uint8Array; prepared: Buffer }[]) {
  const signed = new Map<number, Uint8Array>();
  const cmsOf = new Map<number, Uint8Array>();
  for (const { document, cms, prepared } of returned) {
    cmsOf.set(document.position, cms);
    signed.set(
      document.position,
      fillSignature(
        { updated: prepared, contentsAt: document.contents_at, contentsEnd: document.contents_end },
        await timestampSignature(services.config.tsa, cms),
      ),
    );
  }
  return { signed, cmsOf };
}

/**
 * What the ESP's certificate says about the holder (any ESP's: a detail its subject lacks is null), and how well
 * its name (CN) matches the one expected; with no name to score, the match is `unavailable`. Never left pending.
 */
export function recordAadhaarIdentity(signer: Signer, certificatePem: string): void {
  const details = readAadhaarCertDetails(certificatePem);
  signer.aadhaarCertDetails = details;
  recordCertificateName(signer, details.name);
}
