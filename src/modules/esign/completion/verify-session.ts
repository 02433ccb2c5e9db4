import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import type { EsignSession } from '../esign-session.entity';
import { StoredFile } from '../../files';
import { trustAnchorsPem, type DocumentVerification } from '../../signing';

export interface SessionVerification extends DocumentVerification {
  client_id: string;
  file_id: string;
}

/**
 * Every signature of the session's current PDF (the last signed revision, or the upload before any signature),
 * checked in a worker thread against the trust anchors (TRUST_ANCHORS; in sandbox also the sandbox root CA): whether
 * each signature is intact, when it was proven to exist, whether its signer and its TSA chain to an anchor, and what
 * changed after it.
 */
export async function verifySessionSignatures(
  services: AppServices,
  em: EntityManager,
  session: EsignSession,
): Promise<SessionVerification> {
  const file = await em.findOneOrFail(StoredFile, { id: session.currentPdfFile.id });
  // Verification parses the whole document and every CMS in it: off the event loop, within the pool's budget.
  const report = await services.untrusted.run<DocumentVerification>('verifyPdfTask', {
    pdf: await services.blobs.getBytes(file.storageKey),
    options: { trustedRootsPem: await trustAnchorsPem(services, em) },
  });
  return { client_id: session.id, file_id: file.id, ...report };
}
