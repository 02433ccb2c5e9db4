import { randomBytes, X509Certificate } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import {
  assertFieldsComplete,
  documentsOf,
  type EsignSession,
  isSignersTurn,
  lockTurn,
  Signer,
  signerByToken,
} from '../../esign/signer-side';
import {
  checkDscCertificate,
  describeCertificate,
  dscCms,
  dscDigestToSign,
  dscHolderName,
  dscTrustAnchorsPem,
  fillSignature,
  signedRangeDigest,
  timestampSignature,
} from '../../signing';
import { assertChecksPassed } from '../checks/checks';
import { recordCertificateName } from '../certificate-name';
import { completesOnNextSignature, recordSignedRevision, revocationBeforeCompletion, signatureUpdates } from '../sign-in-turn';
import { DscTransaction, type DscDocumentDigest } from './dsc-transaction.entity';
import { readDscCompletion, readDscStart, type DscStartInput } from './dsc-input';
import { closeOpenTransactions, discardPrepared, refuseCertificate, refuseSignature } from './dsc-outcomes';

/**
 * DSC signing (sign_type `dsc`): the signer's key stays on their USB token, reached through the bridge on their own
 * computer (bridge/), so a signature is made in two steps, as an ESP's is:
 *
 * 1. `startDscSigning`: the signing page sends the certificate the signer picked in the bridge (and the chain the token
 *    holds). It is checked first (dsc-certificate.ts: chain to DSC_TRUST_ANCHORS, validity, non-repudiation, the name,
 *    the owner's pin, revocation asked now); a refusal that is the signer's doing costs one of `max_retry` attempts.
 *    Then each document's signature update is prepared over its current PDF and kept, and the digest the token signs
 *    is answered for each (the SHA-256 of the CMS signed attributes over the byte range's digest).
 * 2. `completeDscSigning`: the token's signatures come back (the signer typed the PIN into the bridge, never the page);
 *    each must verify with the accepted certificate, is wrapped into a CMS, time-stamped and filled in, and the
 *    signature is recorded (completing the document when it is the last: B-LT, B-LTA), whole or not at all.
 */

export interface DscStart {
  txn: string;
  expires_at: Date;
  certificate: { subject: string; issuer: string; serial_number: string; not_after: Date };
  /** One digest per document the signer signs, in envelope order: the bridge signs each after the signer's PIN. */
  documents: { position: number; document_id: string; name: string; digest: string; description: string }[];
}

/** Step 1: the certificate checked, the signatures prepared, the digests to sign answered. */
export async function startDscSigning(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  body: Record<string, unknown>,
  origin: RequestOrigin,
): Promise<DscStart> {
  const found = await signerByToken(em, token);
  const input = readDscStart(body);
  assertMayStart(found);
  const checked = await checkCertificateOf(services, em, found, input);
  if (!checked.ok) return refuseCertificate(services, em, found, checked.refusal, origin);
  const { accepted } = checked;

  const discarded: DscTransaction[] = [];
  const started = await em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    assertMayStart(signer);
    const now = new Date();
    discarded.push(...(await closeOpenTransactions(tx, signer)));
    const txn = `dsctxn_${randomBytes(16).toString('hex')}`;
    const documents = await prepareDocuments(services, tx, { session, signer, txn, now }, accepted.certificatePem);
    const transaction = tx.create(DscTransaction, {
      txn,
      session: session.id,
      signer: signer.id,
      signerTokenHash: signer.tokenHash,
      certificatePem: accepted.certificatePem,
      chainPems: accepted.chainPems,
      documents,
      signingTime: now,
      expiresAt: new Date(now.getTime() + services.config.dsc.signTimeoutSeconds * 1000),
    });
    const certificate = describeCertificate(accepted.certificatePem);
    recordAudit(tx, {
      session,
      signer,
      event: 'dsc_started',
      origin,
      details: {
        txn,
        certificate_subject: certificate.subject,
        certificate_issuer: certificate.issuer,
        certificate_serial: certificate.serialNumber,
        revocation: { status: accepted.revocation.status, source: accepted.revocation.source },
        name_score: accepted.nameScore,
        documents: documents.length,
        ...(discarded.length > 0 && { replaces_txn: discarded.map((open) => open.txn) }),
      },
    });
    await tx.flush();
    const names = new Map((await documentsOf(tx, session)).map((document) => [document.id, document.name]));
    return {
      txn,
      expires_at: transaction.expiresAt,
      certificate: {
        subject: certificate.subject,
        issuer: certificate.issuer,
        serial_number: certificate.serialNumber,
        not_after: certificate.notAfter,
      },
      documents: documents.map((document, index) => {
        const name = names.get(document.document_id) ?? session.filename;
        const description = signingDescription(session, name, index, documents.length);
        const digest = Buffer.from(document.digest, 'hex').toString('base64');
        return { position: document.position, document_id: document.document_id, name, digest, description };
      }),
    };
  });
  for (const open of discarded) await discardPrepared(services, open);
  return started;
}

/** The checks of dsc-certificate.ts for this signer; revocation is asked before any lock is taken, bounded as the LTV step is. */
async function checkCertificateOf(services: AppServices, em: EntityManager, signer: Signer, input: DscStartInput) {
  return checkDscCertificate({
    certificateDer: input.certificate,
    chainDers: input.chain,
    trustAnchorsPem: await dscTrustAnchorsPem(services, em),
    expectedName: signer.nameMatch.prefill_name ?? signer.fullName,
    rule: signer.dscRule ?? null,
    revocation: {
      timeoutMs: services.config.ltvRevocation.timeoutMs,
      publicOnly: services.config.env === 'production',
      budget: AbortSignal.timeout(services.config.ltvRevocation.budgetMs),
    },
  });
}

/**
 * Each document's signature update over its current PDF, kept until the token signs, with the byte range's digest
 * and the digest the token signs for this certificate (the CMS signed attributes over the first).
 */
async function prepareDocuments(
  services: AppServices,
  tx: EntityManager,
  at: { session: EsignSession; signer: Signer; txn: string; now: Date },
  certificatePem: string,
): Promise<DscDocumentDigest[]> {
  const certificateDer = new X509Certificate(certificatePem).raw;
  const documents: DscDocumentDigest[] = [];
  for (const { document, update } of await signatureUpdates(services, tx, at.session, at.signer, at.now)) {
    const preparedKey = `dsc/${at.txn}-${document.position}.pdf`;
    await services.blobs.putBytes(preparedKey, update.updated, 'application/pdf');
    const rangeDigest = signedRangeDigest(update);
    documents.push({
      document_id: document.id,
      position: document.position,
      prepared_key: preparedKey,
      contents_at: update.contentsAt,
      contents_end: update.contentsEnd,
      base_file_id: document.currentPdfFile.id,
      range_digest: rangeDigest.toString('hex'),
      digest: dscDigestToSign(certificateDer, rangeDigest).toString('hex'),
    });
  }
  return documents;
}

/**
 * Step 2: the token's signature over each digest of the transaction (base64, in any order, one per document):
 * verified with the certificate, wrapped into its CMS, time-stamped and filled in, and recorded as the signer's
 * signature. A signature that does not verify fails the transaction (the token signed with another key than the
 * certificate's: not the signer's doing, no attempt is counted); a late or replaced transaction is refused.
 */
export async function completeDscSigning(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  body: Record<string, unknown>,
  origin: RequestOrigin,
): Promise<EsignSession> {
  const found = await signerByToken(em, token);
  const input = readDscCompletion(body);
  const known = await em.fork().findOne(DscTransaction, { txn: input.txn, signer: found.id });
  if (!known || known.signerTokenHash !== found.tokenHash)
    throw new AppError('not_found', { errors: [{ field: 'txn', problem: 'no such DSC transaction of this signer' }] });
  assertStillOpen(known, new Date());

  const certificateDer = new X509Certificate(known.certificatePem).raw;
  const chainDers = known.chainPems.map((pem) => new X509Certificate(pem).raw);
  const cmsOf = new Map<number, Buffer>();
  for (const document of known.documents) {
    const signature = input.signatures.get(document.position);
    if (!signature)
      throw AppError.badRequest([
        { field: 'signatures', problem: `no signature for the document at position ${document.position}` },
      ]);
    const cms = dscCms(certificateDer, chainDers, Buffer.from(document.range_digest, 'hex'), signature);
    if (!cms) return refuseSignature(services, em, found, known, document.position, origin);
    cmsOf.set(document.position, cms);
  }

  // The last signature completes the document: the revocation of what it will carry is asked before the lock.
  const knownRevocation = (await completesOnNextSignature(services, em, found.session))
    ? await revocationBeforeCompletion(services, em, found.session, { cms: [...cmsOf.values()] })
    : undefined;
  const recorded = await em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    const transaction = await tx.findOneOrFail(
      DscTransaction,
      { txn: known.txn },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    assertStillOpen(transaction, new Date());
    assertChecksPassed(signer);
    assertFieldsComplete(signer);
    const current = new Map((await documentsOf(tx, session)).map((document) => [document.position, document.currentPdfFile.id]));
    if (transaction.documents.some((document) => current.get(document.position) !== document.base_file_id)) {
      // Another signature landed on a document meanwhile (a parallel session): these updates no longer fit it.
      throw new AppError('conflict', {
        message: 'the document changed since this signature was prepared: start the DSC signature again',
        errors: [{ field: 'txn', problem: 'prepared over a document that has been signed since' }],
      });
    }
    const signed = new Map<number, Uint8Array>();
    for (const document of transaction.documents) {
      const prepared = await services.blobs.getBytes(document.prepared_key);
      const stamped = await timestampSignature(services.config.tsa, cmsOf.get(document.position)!);
      signed.set(
        document.position,
        fillSignature({ updated: prepared, contentsAt: document.contents_at, contentsEnd: document.contents_end }, stamped),
      );
    }
    recordCertificateName(signer, dscHolderName(transaction.certificatePem));
    transaction.status = 'completed';
    transaction.answeredAt = new Date();
    return recordSignedRevision(services, tx, {
      session,
      signer,
      signed,
      time: transaction.signingTime,
      origin,
      knownRevocation,
    });
  });
  await discardPrepared(services, known);
  return recorded;
}

/** The signer may sign now with a DSC: a `dsc` signer, whose turn it is, with every check passed and field filled. */
function assertMayStart(signer: Signer): void {
  if (signer.signType !== 'dsc') throw new AppError('conflict', { message: `this signer signs with ${signer.signType}` });
  if (!isSignersTurn(signer.session, signer)) {
    const message =
      signer.session.status !== 'pending'
        ? `the session is ${signer.session.status}`
        : signer.status !== 'pending'
          ? `this signer is ${signer.status}`
          : 'it is not this signer’s turn yet';
    throw new AppError('conflict', { message });
  }
  assertChecksPassed(signer);
  assertFieldsComplete(signer);
}

function assertStillOpen(transaction: DscTransaction, now: Date): void {
  if (transaction.status !== 'pending')
    throw new AppError('conflict', {
      message: `this DSC transaction is ${transaction.status}: start the DSC signature again`,
      errors: [{ field: 'txn', problem: `the transaction is ${transaction.status}` }],
    });
  if (transaction.expiresAt <= now)
    throw new AppError('conflict', {
      message: 'this DSC transaction timed out: start the DSC signature again',
      errors: [{ field: 'txn', problem: `the transaction lapsed at ${transaction.expiresAt.toISOString()}` }],
    });
}

/** What the bridge shows the signer beside the PIN field: which document, of which session, for whom. */
function signingDescription(session: EsignSession, name: string, index: number, count: number): string {
  const owner = session.emailTemplateOverrides?.company_name ?? session.sender ?? null;
  const which = count > 1 ? ` (document ${index + 1} of ${count})` : '';
  return `Sign “${name}”${which}${owner ? ` for ${owner}` : ''}, e-sign session ${session.id}`.slice(0, 300);
}
