import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { StoredFile, storeBytes } from '../../files';
import { EsignSession, Signer, type EsignDocument } from '../esign-session.entity';
import { documentsOf, documentSummary, storeRevision } from '../documents';
import { queueCompletion, queueInvite } from '../signers/signer-messages';
import { settleSessionStamps } from '../../stamps';
import { publishSignerChange, recordSessionWebhook } from '../session-events';
import { isSignersTurn } from '../signers/signer-turn';
import { certificateName } from '../file-names';
import { signerFieldValues } from '../elements/field-values';

/**
 * Records that the signer whose turn it is (any pending signer of a parallel session) has signed: each signed
 * revision becomes its document's current PDF, all of them or none, the turn passes to the next signer, and the last
 * signature completes the session. The session row is locked: parallel signatures are recorded one after the other,
 * each over the last. The signing engine calls this with the PDFs it produced; it checks nothing about the
 * signatures themselves.
 */
export async function recordSignature(
  services: AppServices,
  em: EntityManager,
  input: {
    sessionId: string;
    signerId: string;
    /** The documents' new revisions, by position: those the signer signed (with the last signature, every one). */
    signedPdfs: ReadonlyMap<number, Uint8Array>;
    /** With the last signature: the certificate of completion (completeEnvelope). */
    completionCertificate?: Uint8Array;
  },
): Promise<EsignSession> {
  const stored = await em.transactional(async (tx) => {
    const session = await tx.findOne(EsignSession, { id: input.sessionId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!session) throw new AppError('not_found');
    const signer = await tx.findOne(Signer, { id: input.signerId, session });
    if (!signer) throw new AppError('not_found');
    if (session.status !== 'pending') throw new AppError('conflict', { message: `session is ${session.status}` });
    if (!isSignersTurn(session, signer)) throw new AppError('conflict', { message: 'it is not this signer’s turn' });
    const documents = await documentsOf(tx, session);
    const changed: EsignDocument[] = [];
    for (const document of documents) {
      const signed = input.signedPdfs.get(document.position);
      if (!signed) continue;
      const current = await tx.findOneOrFail(StoredFile, { id: document.currentPdfFile.id });
      await storeRevision(services, tx, { session, document, pageCount: current.pageCount }, signed);
      changed.push(document);
    }

    const signerCount = await tx.count(Signer, { session });
    signer.status = 'completed';
    signer.completedAt = new Date();
    session.signerIdx += 1;
    if (session.signerIdx >= signerCount) {
      session.status = 'completed';
      session.endedAt = new Date();
    }
    await tx.flush();
    if (session.status === 'completed') {
      if (input.completionCertificate) {
        session.completionCertificateFile = await storeBytes(
          services.blobs,
          tx,
          { ownerId: session.user.id, kind: 'pdf', name: certificateName(session.filename), mime: 'application/pdf' },
          input.completionCertificate,
        );
        await tx.flush();
      }
      await settleSessionStamps(services, tx, [session.id], 'completed');
      await queueCompletion(services, tx, session, documents);
    } else if (session.signingOrder === 'sequential') {
      // Parallel signers were all invited at the start.
      const next = await tx.findOneOrFail(Signer, { session, position: session.signerIdx });
      await queueInvite(services, tx, session, next);
    }
    await publishSignerChange(services, tx, session, signer);
    const owner = { id: session.id, userId: session.user.id };
    await recordSessionWebhook(services, tx, owner, 'esign.signer.signed', signer.id, {
      fields: signerFieldValues(signer),
      documents: changed.map(documentSummary),
    });
    if (session.status === 'completed')
      await recordSessionWebhook(services, tx, owner, 'esign.session.completed', undefined, {
        documents: documents.map(documentSummary),
      });
    return session;
  });
  return stored;
}
