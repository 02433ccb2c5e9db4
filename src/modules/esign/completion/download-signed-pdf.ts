import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { StoredFile } from '../../files';
import type { Actor } from '../../../platform/auth/actor';
import type { EsignSession } from '../esign-session.entity';
import { certificateName, signedName } from '../file-names';
import { getOwnSession } from '../session/own-session';

export const NOT_COMPLETED = 'Esign not completed.';

/** A short-lived link to the final signed PDF; until the session completes there is nothing to download. */
export function downloadSignedPdf(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  clientId: string,
): Promise<{ url: string; expires_in: number }> {
  return completedSessionLink(services, em, actor, clientId, (session) => ({
    fileId: session.currentPdfFile.id,
    filename: signedName(session.filename),
  }));
}

/**
 * A short-lived link to the session's certificate of completion, made when the session completed (signed by the
 * platform); until then there is none.
 */
export function downloadCompletionCertificate(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  clientId: string,
): Promise<{ url: string; expires_in: number }> {
  return completedSessionLink(services, em, actor, clientId, (session) =>
    session.completionCertificateFile
      ? { fileId: session.completionCertificateFile.id, filename: certificateName(session.filename) }
      : null,
  );
}

/** A link to a file of one of the caller's completed sessions; `404 Esign not completed.` otherwise. */
async function completedSessionLink(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  clientId: string,
  fileOf: (session: EsignSession) => { fileId: string; filename: string } | null,
): Promise<{ url: string; expires_in: number }> {
  const session = await getOwnSession(services, em, actor, clientId, NOT_COMPLETED);
  const target = session.status === 'completed' ? fileOf(session) : null;
  if (!target) throw new AppError('not_found', { message: NOT_COMPLETED });
  const file = await em.findOneOrFail(StoredFile, { id: target.fileId });
  return services.urls.issue(
    { key: file.storageKey, filename: target.filename, contentType: 'application/pdf' },
    services.config.downloadUrlTtlSeconds,
  );
}
