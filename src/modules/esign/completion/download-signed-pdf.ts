import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { StoredFile } from '../../files';
import type { Actor } from '../../../platform/auth/actor';
import { documentsOf } from '../documents';
import type { EsignSession } from '../esign-session.entity';
import { certificateName, signedDocumentNames, signedName, signedZipName } from '../file-names';
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

export interface SignedDocumentLink {
  document_id: string;
  position: number;
  name: string;
  /** The download name, also the document's name in the ZIP (file-names.ts signedDocumentNames). */
  filename: string;
  url: string;
  expires_in: number;
}

export interface SignedDocumentsDownload {
  client_id: string;
  documents: SignedDocumentLink[];
  zip_url: string;
  expires_in: number;
}

/**
 * Short-lived links to every signed document of a completed envelope, in order, and one to a ZIP of them all (made
 * as it is downloaded, from the same blobs). The first document's link downloads what download-pdf's does, under
 * the document's own name. Until the session completes: `404 Esign not completed.`, as download-pdf.
 */
export async function downloadSignedDocuments(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  clientId: string,
): Promise<SignedDocumentsDownload> {
  const session = await completedOwnSession(services, em, actor, clientId);
  const documents = await documentsOf(em, session);
  await em.populate(documents, ['currentPdfFile']);
  const filenames = signedDocumentNames(documents.map((document) => document.name));
  const ttl = services.config.downloadUrlTtlSeconds;
  const links = documents.map((document, index) => ({
    document_id: document.id,
    position: document.position,
    name: document.name,
    filename: filenames[index]!,
    ...services.urls.issue(
      { key: document.currentPdfFile.storageKey, filename: filenames[index]!, contentType: 'application/pdf' },
      ttl,
    ),
  }));
  const entries = documents.map((document, index) => ({ key: document.currentPdfFile.storageKey, filename: filenames[index]! }));
  const zip = services.urls.issueBundle({ entries, filename: signedZipName(session.filename) }, ttl);
  return { client_id: session.id, documents: links, zip_url: zip.url, expires_in: ttl };
}

/** One of the caller's sessions, completed; `404 Esign not completed.` otherwise (unknown and another user's too). */
async function completedOwnSession(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  clientId: string,
): Promise<EsignSession> {
  const session = await getOwnSession(services, em, actor, clientId, NOT_COMPLETED);
  if (session.status !== 'completed') throw new AppError('not_found', { message: NOT_COMPLETED });
  return session;
}

/** A link to a file of one of the caller's completed sessions; `404 Esign not completed.` otherwise. */
async function completedSessionLink(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  clientId: string,
  fileOf: (session: EsignSession) => { fileId: string; filename: string } | null,
): Promise<{ url: string; expires_in: number }> {
  const target = fileOf(await completedOwnSession(services, em, actor, clientId));
  if (!target) throw new AppError('not_found', { message: NOT_COMPLETED });
  const file = await em.findOneOrFail(StoredFile, { id: target.fileId });
  return services.urls.issue(
    { key: file.storageKey, filename: target.filename, contentType: 'application/pdf' },
    services.config.downloadUrlTtlSeconds,
  );
}
