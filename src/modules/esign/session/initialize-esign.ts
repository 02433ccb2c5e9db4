import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import { reserveFileSlot, storeBytes } from '../../files';
import { queueFirstInvites } from '../signers/signer-messages';
import { recordSessionsWebhook } from '../session-events';
import { recordAudit } from '../../audit';
import { reserveStamps } from '../../stamps';
import { User } from '../../users';
import type { RowRef } from '../../../platform/db/row-ref';
import type { Actor } from '../../../platform/auth/actor';
import { EsignDocument, EsignSession, Signer } from '../esign-session.entity';
import { documentSummary, setCurrentPdf } from '../documents';
import { EXPIRE_SESSION_JOB } from '../esign.jobs';
import { enqueue } from '../../../platform/jobs/enqueue';
import { planSession } from './plan-session';
import type { SessionPlan } from './session-plan';
import type { SessionRequest } from './session.inputs';
import { newSignerToken, signerTokenBox } from '../signers/signer-token';
import { refuseForbiddenByCertification } from './document-certification';
import { referencesOf } from './check-references';

export async function initializeEsign(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  request: SessionRequest,
): Promise<EsignSession> {
  const plan = await planSession(referencesOf(em, actor), request, services.config);
  return createSession(services, em, actor, plan);
}

/** A session to create: its validated plan, where it came from, and when its invites may go. */
export interface SessionToCreate {
  plan: SessionPlan;
  origin?: { template: RowRef; version: number };
  /** When the invites may go at the earliest (a bulk paces its invites); absent: at once. */
  invitesNotBefore?: Date;
}

/** Creates the session and its signers from a validated plan (initialize-esign and initialize-from-template). */
export async function createSession(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  plan: SessionPlan,
  origin?: { template: RowRef; version: number },
  invitesNotBefore?: Date,
): Promise<EsignSession> {
  // A certified document whose permissions forbid what the session adds is refused before anything is written.
  const stamped = await refuseForbiddenByCertification(services, plan);
  const [session] = await createSessions(services, em, actor, [{ plan, origin, invitesNotBefore, stamped }]);
  return session!;
}

/**
 * Creates sessions from validated plans whose certification was checked (refuseForbiddenByCertification answers
 * `stamped`, the bytes a stamp goes in front of), in one transaction: each session with its signers and documents,
 * its stamps, its first invites, audit row, expiry job and `esign.session.created` event. Many sessions at once (a
 * bulk's chunk) take one statement per table; stamps are reserved session by session.
 */
export async function createSessions(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  items: readonly (SessionToCreate & { stamped?: Buffer })[],
): Promise<EsignSession[]> {
  const writtenKeys: string[] = [];
  return em
    .transactional(async (tx) => {
      const createdAt = new Date();
      const made = items.map((item) => ({ item, ...buildSession(services, tx, actor, item, createdAt) }));
      await tx.flush();
      for (const { item, session, documents } of made) {
        if (!item.plan.stamp) continue;
        const target = documents[item.plan.stampDocument]!;
        await prefixReservedStamps(services, tx, actor, item.plan, { target, bytes: item.stamped! }, session, writtenKeys);
      }
      // The first signer's turn starts now (every signer's, in a parallel session); the invites' delivery jobs
      // commit with the session.
      await queueFirstInvites(
        services,
        tx,
        made.flatMap(({ item, session, signers }) =>
          (item.plan.signingOrder === 'parallel' ? signers : signers.slice(0, 1)).map((signer) => ({
            session,
            signer,
            notBefore: item.invitesNotBefore,
          })),
        ),
      );
      for (const { item, session, signers, documents } of made)
        auditCreation(tx, session, actor, { signers: signers.length, documents, origin: item.origin });
      // The expiry job commits with the session: it only ever sees a session that exists (the sweep stays
      // as a safety net).
      await enqueue(
        services.boss,
        tx,
        made.map(({ session }) => ({
          name: EXPIRE_SESSION_JOB,
          data: { client_id: session.id },
          startAfter: session.expiresAt,
          singletonKey: session.id,
        })),
      );
      await tx.flush();
      const sessions = made.map(({ session }) => session);
      await recordSessionsWebhook(
        services,
        tx,
        sessions.map((session) => ({ id: session.id, userId: actor.userId })),
        'esign.session.created',
      );
      return sessions;
    })
    .catch(async (error: unknown) => {
      // The transaction is gone: so are the blobs written for it.
      await Promise.all(writtenKeys.map((key) => services.blobs.delete(key).catch(() => undefined)));
      throw error;
    });
}

/** A session's rows as its plan says, not yet written. */
function buildSession(
  services: AppServices,
  tx: EntityManager,
  actor: Actor,
  { plan, origin }: SessionToCreate,
  createdAt: Date,
): { session: EsignSession; signers: Signer[]; documents: EsignDocument[] } {
  const [first] = plan.documents;
  const box = signerTokenBox(services.config.secretsEncryptionKey);
  const session = tx.create(EsignSession, {
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
    return tx.create(Signer, { ...signer, session, position, tokenHash: hash, tokenSealed: box.seal(token) });
  });
  return { session, signers, documents: createDocuments(tx, session, plan) };
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
