import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';
import { EsignSession, Signer, type StoredElement } from '../esign/signer-side';
import { StoredFile, storeBytes } from '../files';
import type { ImagePlacement } from '../signing';

/** The name of a signer's signature field in the working PDF. */
export const fieldNameOf = (signer: Signer) => signer.id;

/**
 * The working PDF, prepared once before the first signature: image elements drawn, one signature field per
 * signer at its placements (stamp pages already in front, so pages shift by them), appended as an incremental
 * update. Stored as a new file that becomes the session's current PDF.
 */
export async function ensurePrepared(services: AppServices, tx: EntityManager, session: EsignSession): Promise<Buffer> {
  const current = await tx.findOneOrFail(StoredFile, { id: session.currentPdfFile.id });
  if (session.preparedAt) return services.blobs.getBytes(current.storageKey);

  const signers = await tx.find(Signer, { session }, { orderBy: { position: 'asc' } });
  const shift = session.stampPageCount;
  const imageElements = signers.flatMap((signer) =>
    signer.elements.filter((element) => element.type === 'image' && element.value),
  );
  // A signature element may carry a wet-signature image (an asset): it shows inside that appearance.
  const isWet = (element: StoredElement) => element.type === 'signature' && !!element.value?.startsWith('file_');
  const assetIds = [...imageElements, ...signers.flatMap((signer) => signer.elements.filter(isWet))].map(
    (element) => element.value!,
  );
  const assets = new Map<string, { bytes: Buffer; mime: ImagePlacement['mime'] }>();
  for (const asset of await tx.find(StoredFile, { id: assetIds, user: session.user, kind: 'asset' })) {
    assets.set(asset.id, { bytes: await services.blobs.getBytes(asset.storageKey), mime: asset.mime as ImagePlacement['mime'] });
  }
  const images: ImagePlacement[] = imageElements
    .filter((element) => assets.has(element.value!))
    .map((element) => ({ ...element, page: element.page + shift, ...assets.get(element.value!)! }));
  // One incremental update of the current document (its bytes stay a prefix): in the worker pool, as every parse
  // of uploaded bytes.
  const prepared = await services.untrusted.run<Uint8Array>('prepareForSigningTask', {
    pdf: await services.blobs.getBytes(current.storageKey),
    signers: signers.map((signer) => ({
      fieldName: fieldNameOf(signer),
      signatureBoxes: signer.elements
        .filter((element) => element.type === 'signature')
        .map((element) => ({
          page: element.page + shift,
          x: element.x,
          y: element.y,
          width: element.width,
          height: element.height,
          wetImage: isWet(element) ? assets.get(element.value!) : undefined,
        })),
    })),
    images,
  });
  const file = await storeBytes(
    services.blobs,
    tx,
    { ownerId: session.user.id, kind: 'pdf', name: session.filename, mime: 'application/pdf', pageCount: current.pageCount },
    prepared,
  );
  session.currentPdfFile = file;
  session.preparedAt = new Date();
  await tx.flush();
  return Buffer.from(prepared);
}
