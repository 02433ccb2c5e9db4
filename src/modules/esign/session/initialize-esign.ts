import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import { reserveFileSlot, storeBytes } from '../../files';
import { queueInvite } from '../signers/signer-messages';
import { recordSessionWebhook } from '../session-events';
import { recordAudit } from '../../audit';
import { reserveStamps } from '../../stamps';
import { User } from '../../users';
import type { RowRef } from '../../../platform/db/row-ref';
import type { Actor } from '../../../platform/auth/actor';
import { EsignDocument, EsignSession, Signer } from '../esign-session.entity';
import { documentSummary, setCurrentPdf } from '../documents';
import { EXPIRE_SESSION_JOB } from '../esign.jobs';
import { enqueue } from '../../../platform/jobs/enqueue';
import { planSession, type SessionPlan } from './plan-session';
import type { SessionRequest } from './session.inputs';
import { newSignerToken, signerTokenBox } from '../signers/signer-token';
import { refuseForbiddenByCertification } from './document-certification';

export async function initializeEsign(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  request: SessionRequest,
): Promise<EsignSession> {
  const plan = await planSession(em, actor, request, Object.keys(services.config.esps));
  return createSession(services, em, actor, plan);
}

/** Creates the session and its signers from a validated plan (initialize-esign and initialize-from-template). */
export async function createSession(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  plan: SessionPlan,
  origin?: { template: RowRef; version: number },
  /** When the invites may go at the earliest (a bulk paces its invites); absent: at once. */
  invitesNotBefore?: Date,
): Promise<EsignSession> {
  // A certified document whose permissions forbid what the session adds is refused before anything is written.
  const stamped = await refuseForbiddenByCertification(services, plan);
  const [first] = plan.documents;
  const box = signerTokenBox(services.config.secretsEncryptionKey);
  const createdAt = new Date();
  const writtenKeys: string[] = [];
  const session = await em
    .transactional(async (tx) => {
      const created = tx.create(EsignSession, {
        createdAt,
        user: tx.getReference(User, actor.userId),
        signType: plan.signType,
        authMode: plan.authMode,
        backend: plan.backend,
        file: first!.file,
        currentPdfFile: first!.file,
        filename: first!.name,
        stampDocument: plan.stampDocument,
        folder: plan.folder,
        allowDownload: plan.allowDownload,
        allowDelegation: plan.allowDelegation,
        appendCertificate: plan.appendCertificate,
        signingOrder: plan.signingOrder,
        reminderIntervalHours: plan.reminderIntervalHours ?? undefined,
        reminderMax: plan.reminderMax,
        expirySeconds: plan.expirySeconds,
        expiresAt: new Date(createdAt.getTime() + plan.expirySeconds * 1000),
        maxRetry: plan.maxRetry,
        redirectUrl: plan.redirectUrl,
        sender: plan.sender,
        emailTemplateOverrides: plan.emailTemplateOverrides,
        template: origin && tx.getReference<RowRef>('Template', origin.template.id),
        templateVersion: origin?.version,
      });
      const signers = plan.signers.map((signer, position) => {
        const { token, hash } = newSignerToken();
        return tx.create(Signer, { ...signer, session: created, position, tokenHash: hash, tokenSealed: box.seal(token) });
      });
      const documents = createDocuments(tx, created, plan);
      await tx.flush();
      if (plan.stamp) {
        const target = documents[plan.stampDocument]!;
        await prefixReservedStamps(services, tx, actor, plan, { target, bytes: stamped }, created, writtenKeys);
      }
      // The first signer's turn starts now (every signer's, in a parallel session); the invites' delivery jobs
      // commit with the session.
      for (const signer of plan.signingOrder === 'parallel' ? signers : [signers[0]]) {
        await queueInvite(services, tx, created, signer, { notBefore: invitesNotBefore });
      }
      auditCreation(tx, created, actor, { signers: signers.length, documents, origin });
      // The expiry job commits with the session: it only ever sees a session that exists (the sweep stays
      // as a safety net).
      await enqueue(services.boss, tx, [
        { name: EXPIRE_SESSION_JOB, data: { client_id: created.id }, startAfter: created.expiresAt, singletonKey: created.id },
      ]);
      await tx.flush();
      await recordSessionWebhook(services, tx, { id: created.id, userId: actor.userId }, 'esign.session.created');
      return created;
    })
    .catch(async (error: unknown) => {
      // The transaction is gone: so are the blobs written for it.
      await Promise.all(writtenKeys.map((key) => services.blobs.delete(key).catch(() => undefined)));
      throw error;
    });
  return session;
}

/** The `session_created` audit row: who made it, from what (the documents of an envelope, a template). */
function auditCreation(
  tx: EntityManager,
  session: EsignSession,
  actor: Actor,
  made: { signers: number; documents: EsignDocument[]; origin?: { template: RowRef; version: number } },
): void {
  const { documents, origin } = made;
  recordAudit(tx, {
    session,
    event: 'session_created',
    details: {
      by: actor.userId,
      signers: made.signers,
      file_id: documents[0]!.file.id,
      ...(documents.length > 1 && { documents: documents.map(documentSummary) }),
      ...(origin?.template ? { template_id: origin.template.id, template_version: origin.version } : {}),
    },
  });
}

/** The envelope's documents, in order, each starting from its upload. */
function createDocuments(tx: EntityManager, session: EsignSession, plan: SessionPlan): EsignDocument[] {
  return plan.documents.map((document, position) =>
    tx.create(EsignDocument, { session, position, name: document.name, file: document.file, currentPdfFile: document.file }),
  );
}

/**
 * Reserves the requested stamps (same transaction, row locks) and makes the stamped document signers see: the
 * certificate pages first, then the uploaded PDF. `file_id` stays the upload; placements shift at read.
 */
async function prefixReservedStamps(
  services: AppServices,
  tx: EntityManager,
  actor: Actor,
  plan: SessionPlan,
  stamped: { target: EsignDocument; bytes: Buffer },
  session: EsignSession,
  writtenKeys: string[],
): Promise<void> {
  const { target } = stamped;
  const upload = plan.documents[target.position]!.file;
  const reserved = await reserveStamps(services, tx, actor, plan.stamp!, session.id);
  // The uploaded PDF is parsed here and the pages are added as an incremental update: in the worker pool, as
  // every parse of uploaded bytes.
  const { bytes, stampPages } = await services.untrusted.run<{ bytes: Uint8Array; stampPages: number }>('prefixStampPagesTask', {
    document: stamped.bytes,
    certificates: await Promise.all(reserved.map((stamp) => services.blobs.getBytes(stamp.storageKey))),
  });
  const slot = reserveFileSlot(actor.userId);
  writtenKeys.push(slot.storageKey);
  const file = await storeBytes(
    services.blobs,
    tx,
    {
      ownerId: actor.userId,
      kind: 'pdf',
      name: upload.name,
      mime: 'application/pdf',
      pageCount: (upload.pageCount ?? 0) + stampPages,
    },
    bytes,
    slot,
  );
  setCurrentPdf(session, target, file);
  session.stampPageCount = stampPages;
  await tx.flush();
}
