import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { recordAudit, type RequestOrigin } from '../audit';
import { EsignDocument, EsignSession, recordSessionWebhook, signerByToken } from '../esign/signer-side';
import { StoredFile } from '../files';

/** The document a signer may read: its size, and its bytes once the caller is ready to send them. */
export interface SignerDocument {
  sizeBytes: number;
  open(): Promise<Readable>;
}

/**
 * A signer reads one document of the session (`position`, the first by default) as it now stands: while it is pending (before, during and after their turn),
 * and once completed only if the sender allows downloads; never a cancelled or expired one. Each read is
 * audited as `viewed` (the page loads it once; a download after completion counts too).
 */
export async function readSignerDocument(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  origin: RequestOrigin,
  position = 0,
): Promise<SignerDocument> {
  const signer = await signerByToken(em, token);
  const session = await em.findOneOrFail(EsignSession, { id: signer.session.id });
  if (session.status === 'cancelled' || session.status === 'expired' || session.status === 'declined')
    throw new AppError('conflict', { message: `the session is ${session.status}` });
  if (session.status === 'completed' && !session.allowDownload)
    throw new AppError('conflict', { message: 'downloading the signed document is not allowed' });
  const document = await em.findOne(EsignDocument, { session, position });
  if (!document) throw new AppError('not_found', { message: `the session has no document ${position}` });
  const file = await em.findOneOrFail(StoredFile, { id: document.currentPdfFile.id });
  await em.transactional(async (tx) => {
    // The owner hears of a signer's first look only; every look is in the audit trail.
    const [seen] = await tx
      .getConnection()
      .execute<unknown[]>(
        `select 1 from esign_audit_events where signer_id = ? and event = 'viewed' limit 1`,
        [signer.id],
        'all',
        tx.getTransactionContext(),
      );
    recordAudit(tx, {
      session,
      signer,
      event: 'viewed',
      origin,
      details: { file_id: file.id, ...(position > 0 && { document_id: document.id }) },
    });
    if (!seen)
      await recordSessionWebhook(services, tx, { id: session.id, userId: session.user.id }, 'esign.signer.viewed', signer.id);
  });
  return { sizeBytes: file.sizeBytes, open: () => services.blobs.getStream(file.storageKey) };
}
