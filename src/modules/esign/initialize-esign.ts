import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { User } from '../users/user.entity';
import type { Template } from '../templates/template.entity';
import type { Actor } from '../users/access-tokens';
import { EsignSession } from './esign-session.entity';
import { EXPIRE_SESSION_JOB } from './esign.jobs';
import { planSession, type SessionPlan } from './plan-session';
import type { SessionRequest } from './session.inputs';
import { Signer } from './signer.entity';
import { newSignerToken, signerTokenBox } from './signer-token';

export async function initializeEsign(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  request: SessionRequest,
): Promise<EsignSession> {
  const plan = await planSession(em, actor, request);
  return createSession(services, em, actor, plan);
}

/** Creates the session and its signers from a validated plan (initialize-esign and initialize-from-template). */
export async function createSession(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  plan: SessionPlan,
  origin?: { template: Template; version: number },
): Promise<EsignSession> {
  if (plan.stamp) {
    // Stamp reservation arrives with the e-stamp issues; refusing beats silently ignoring a paid stamp.
    throw AppError.badRequest([{ field: 'stamp', problem: 'stamp reservation is not available on this deployment yet' }]);
  }
  const box = signerTokenBox(services.config.secretsEncryptionKey);
  const createdAt = new Date();
  const session = await em.transactional(async (tx) => {
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
      expirySeconds: plan.expirySeconds,
      expiresAt: new Date(createdAt.getTime() + plan.expirySeconds * 1000),
      maxRetry: plan.maxRetry,
      redirectUrl: plan.redirectUrl,
      sender: plan.sender,
      emailTemplateOverrides: plan.emailTemplateOverrides,
      template: origin?.template,
      templateVersion: origin?.version,
    });
    plan.signers.forEach((signer, position) => {
      const { token, hash } = newSignerToken();
      tx.create(Signer, { ...signer, session: created, position, tokenHash: hash, tokenSealed: box.seal(token) });
    });
    return created;
  });
  // After the commit: the job only ever sees a session that exists. A lost send is caught by the sweep.
  await services.boss
    .send(EXPIRE_SESSION_JOB, { client_id: session.id }, { startAfter: session.expiresAt, singletonKey: session.id })
    .catch((error: unknown) =>
      services.log.warn({ err: error, client_id: session.id }, 'expiry job not queued; the sweep will expire it'),
    );
  return session;
}
