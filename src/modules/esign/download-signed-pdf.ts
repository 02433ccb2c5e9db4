import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { StoredFile } from '../files';
import type { Actor } from '../../platform/auth/actor';
import { getOwnSession } from './read-sessions';

export const NOT_COMPLETED = 'Esign not completed.';

/** A short-lived link to the final signed PDF; until the session completes there is nothing to download. */
export async function downloadSignedPdf(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  clientId: string,
): Promise<{ url: string; expires_in: number }> {
  const session = await getOwnSession(services, em, actor, clientId, NOT_COMPLETED);
  if (session.status !== 'completed') throw new AppError('not_found', { message: NOT_COMPLETED });
  const file = await em.findOneOrFail(StoredFile, { id: session.currentPdfFile.id });
  return services.urls.issue(
    { key: file.storageKey, filename: signedName(session.filename), contentType: 'application/pdf' },
    services.config.downloadUrlTtlSeconds,
  );
}

/** The signed PDF's download name: `contract.pdf` -> `contract-signed.pdf`. */
export function signedName(filename: string): string {
  return filename.toLowerCase().endsWith('.pdf') ? `${filename.slice(0, -4)}-signed.pdf` : `${filename}-signed.pdf`;
}
