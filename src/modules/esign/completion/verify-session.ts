import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import { documentsOf } from '../documents';
import type { EsignSession } from '../esign-session.entity';
import { trustAnchorsPem, type DocumentVerification } from '../../signing';

/** One document of the envelope, its current PDF (`file_id`) checked. */
export interface DocumentVerificationEntry extends DocumentVerification {
  document_id: string;
  position: number;
  name: string;
  file_id: string;
}

/**
 * The first document's report at the top (the contract's one-document answer, as before envelopes: the session's
 * `current_pdf_file_id` is the first document's), and every document's in `documents`, in order.
 */
export interface SessionVerification extends DocumentVerification {
  client_id: string;
  file_id: string;
  documents: DocumentVerificationEntry[];
}

/**
 * Every signature of each of the session's documents as it stands (the last signed revision, or the upload before
 * any signature), checked in a worker thread against the trust anchors (TRUST_ANCHORS; in sandbox also the sandbox
 * root CA): whether each signature is intact, when it was proven to exist, whether its signer and its TSA chain to
 * an anchor, and what changed after it.
 */
export async function verifySessionSignatures(
  services: AppServices,
  em: EntityManager,
  session: EsignSession,
): Promise<SessionVerification> {
  const documents = await documentsOf(em, session);
  await em.populate(documents, ['currentPdfFile']);
  const trustedRootsPem = await trustAnchorsPem(services, em);
  const reports: DocumentVerificationEntry[] = [];
  // One document at a time: each is read whole and parsed with every CMS in it, off the event loop within the
  // pool's budget; ten large documents at once would hold them all in memory and take every thread of the pool.
  for (const document of documents) {
    const file = document.currentPdfFile;
    const report = await services.untrusted.run<DocumentVerification>('verifyPdfTask', {
      pdf: await services.blobs.getBytes(file.storageKey),
      options: { trustedRootsPem },
    });
    reports.push({ document_id: document.id, position: document.position, name: document.name, file_id: file.id, ...report });
  }
  const { document_id: _id, position: _position, name: _name, ...first } = reports[0]!;
  return { client_id: session.id, ...first, documents: reports };
}
