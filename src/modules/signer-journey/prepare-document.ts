import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';
import {
  assetIdsOf,
  EsignSession,
  formFieldLayouts,
  lockedFieldNames,
  pageImageElements,
  Signer,
  signatureElements,
  signerFills,
  type StoredElement,
} from '../esign/signer-side';
import { StoredFile, storeBytes } from '../files';
import type { ImagePlacement } from '../signing';

/** The name of a signer's signature field in the working PDF. */
export const fieldNameOf = (signer: Signer) => signer.id;

type Asset = { bytes: Buffer; mime: ImagePlacement['mime'] };

/** The session owner's uploaded images the elements show, by client_id. */
export async function assetsOf(services: AppServices, tx: EntityManager, session: EsignSession, elements: StoredElement[]) {
  const assets = new Map<string, Asset>();
  const ids = assetIdsOf(elements);
  if (ids.length === 0) return assets;
  for (const asset of await tx.find(StoredFile, { id: ids, user: session.user, kind: 'asset' })) {
    assets.set(asset.id, { bytes: await services.blobs.getBytes(asset.storageKey), mime: asset.mime as ImagePlacement['mime'] });
  }
  return assets;
}

/** The values a signer's signature update writes into their fields (signerFills), seal images read. */
export async function fillsOf(services: AppServices, tx: EntityManager, session: EsignSession, signer: Signer, signedAt: Date) {
  return signerFills(signer.elements, signedAt, await assetsOf(services, tx, session, signer.elements));
}

/**
 * The working PDF, prepared once before the first signature: the owner's images drawn, one signature field per
 * signer at its placements (its lock naming the signer's form fields), and every form field, empty or showing the
 * owner's prefill (stamp pages already in front, so pages shift by them), appended as an incremental update.
 * Stored as a new file that becomes the session's current PDF.
 */
export async function ensurePrepared(services: AppServices, tx: EntityManager, session: EsignSession): Promise<Buffer> {
  const current = await tx.findOneOrFail(StoredFile, { id: session.currentPdfFile.id });
  if (session.preparedAt) return services.blobs.getBytes(current.storageKey);

  const signers = await tx.find(Signer, { session }, { orderBy: { position: 'asc' } });
  const shift = session.stampPageCount;
  const elements = signers.flatMap((signer) => signer.elements);
  const assets = await assetsOf(services, tx, session, elements);
  const images: ImagePlacement[] = pageImageElements(elements)
    .filter((element) => assets.has(element.value!))
    .map((element) => ({ ...element, page: element.page + shift, ...assets.get(element.value!)! }));
  const uploadedPages = (current.pageCount ?? shift) - shift;
  // One incremental update of the current document (its bytes stay a prefix): in the worker pool, as every parse
  // of uploaded bytes.
  const prepared = await services.untrusted.run<Uint8Array>('prepareForSigningTask', {
    pdf: await services.blobs.getBytes(current.storageKey),
    signers: signers.map((signer) => ({
      fieldName: fieldNameOf(signer),
      lockedFields: lockedFieldNames(signer.elements),
      signatureBoxes: signatureElements(signer.elements).map((element) => {
        const wet = element.value ? assets.get(element.value) : undefined;
        return {
          page: element.page + shift,
          x: element.x,
          y: element.y,
          width: element.width,
          height: element.height,
          wetImage: wet,
        };
      }),
    })),
    images,
    formFields: formFieldLayouts(elements, shift, uploadedPages, assets),
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
