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
import { EsignSession, Signer } from '../esign-session.entity';
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
): Promise<EsignSession> {
  // A certified document whose permissions forbid what the session adds is refused before anything is written.
  const document = await refuseForbiddenByCertification(services, plan);
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
        file: plan.file,
        currentPdfFile: plan.file,
        filename: plan.file.name,
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
      await tx.flush();
      if (plan.stamp) await prefixReservedStamps(services, tx, actor, plan, document, created, writtenKeys);
      // The first signer's turn starts now (every signer's, in a parallel session); the invites' delivery jobs
      // commit with the session.
      for (const signer of plan.signingOrder === 'parallel' ? signers : [signers[0]]) {
        await queueInvite(services, tx, created, signer);
      }
      recordAudit(tx, {
        session: created,
        event: 'session_created',
        details: {
          by: actor.userId,
          signers: signers.length,
          file_id: plan.file.id,
          ...(origin?.template ? { template_id: origin.template.id, template_version: origin.version } : {}),
        },
      });
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

/**
 * Reserves the requested stamps (same transaction, row locks) and makes the document signers see: the
 * certificate pages first, then the uploaded PDF. `file_id` stays the upload; placements shift at read.
 */
async function prefixReservedStamps(
  services: AppServices,
  tx: EntityManager,
  actor: Actor,
  plan: SessionPlan,
  document: Buffer,
  session: EsignSession,
  writtenKeys: string[],
): Promise<void> {
  const reserved = await reserveStamps(services, tx, actor, plan.stamp!, session.id);
  // The uploaded PDF is parsed here and the pages are added as an incremental update: in the worker pool, as
  // every parse of uploaded bytes.
  const { bytes, stampPages } = await services.untrusted.run<{ bytes: Uint8Array; stampPages: number }>('prefixStampPagesTask', {
    document,
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
      name: plan.file.name,
      mime: 'application/pdf',
      pageCount: (plan.file.pageCount ?? 0) + stampPages,
    },
    bytes,
    slot,
  );
  session.currentPdfFile = file;
  session.stampPageCount = stampPages;
  await tx.flush();
}
