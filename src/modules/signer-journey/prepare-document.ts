import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';
import {
  assetIdsOf,
  documentsOf,
  documentsSignedBy,
  elementsOn,
  storeRevision,
  stampShiftOf,
  type EsignDocument,
  EsignSession,
  formFieldLayouts,
  lockedFieldNames,
  pageImageElements,
  Signer,
  signatureElements,
  signerFills,
  type StoredElement,
} from '../esign/signer-side';
import { StoredFile } from '../files';
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

/** The values a signer's signature update on one document writes into their fields there (signerFills), seal images read. */
export async function fillsOf(
  services: AppServices,
  tx: EntityManager,
  session: EsignSession,
  signer: Signer,
  position: number,
  signedAt: Date,
) {
  const elements = elementsOn(signer.elements, position);
  return signerFills(elements, signedAt, await assetsOf(services, tx, session, elements));
}

/** A document of the envelope and the bytes of its current PDF. */
export interface WorkingDocument {
  document: EsignDocument;
  pdf: Buffer;
}

/**
 * The documents a signer signs (documentsSignedBy; `only` those positions of them, for one batch of an Aadhaar
 * signer), each as it stands now, prepared first if no signer has signed yet (ensurePrepared).
 */
export async function documentsToSign(
  services: AppServices,
  tx: EntityManager,
  session: EsignSession,
  signer: Signer,
  only?: number[],
): Promise<WorkingDocument[]> {
  const documents = await ensurePrepared(services, tx, session);
  const signed = new Set(only ?? documentsSignedBy(signer, documents.length));
  const working: WorkingDocument[] = [];
  for (const document of documents.filter((candidate) => signed.has(candidate.position))) {
    const current = await tx.findOneOrFail(StoredFile, { id: document.currentPdfFile.id });
    working.push({ document, pdf: await services.blobs.getBytes(current.storageKey) });
  }
  return working;
}

/**
 * The envelope's documents, prepared once before the first signature, each as one incremental update: the owner's
 * images drawn, one signature field per signer who signs it at their placements there (its lock naming the signer's
 * form fields), and every form field, empty or showing the owner's prefill (stamp pages already in front of the
 * stamped document, so its pages shift by them). Each is stored as a new file that becomes its current PDF.
 */
export async function ensurePrepared(services: AppServices, tx: EntityManager, session: EsignSession): Promise<EsignDocument[]> {
  const documents = await documentsOf(tx, session);
  if (session.preparedAt) return documents;

  const signers = await tx.find(Signer, { session }, { orderBy: { position: 'asc' } });
  const assets = await assetsOf(
    services,
    tx,
    session,
    signers.flatMap((signer) => signer.elements),
  );
  for (const document of documents) {
    const current = await tx.findOneOrFail(StoredFile, { id: document.currentPdfFile.id });
    const prepared = await prepareDocument(services, {
      pdf: await services.blobs.getBytes(current.storageKey),
      pageCount: current.pageCount,
      shift: stampShiftOf(session, document.position),
      signers: signers.filter((signer) => documentsSignedBy(signer, documents.length).includes(document.position)),
      position: document.position,
      assets,
    });
    await storeRevision(services, tx, { session, document, pageCount: current.pageCount }, prepared);
  }
  session.preparedAt = new Date();
  await tx.flush();
  return documents;
}

/** One document's preparing update, made in the worker pool (as every parse of uploaded bytes); its bytes stay a prefix. */
function prepareDocument(
  services: AppServices,
  input: {
    pdf: Buffer;
    pageCount: number | undefined;
    shift: number;
    signers: Signer[];
    position: number;
    assets: Map<string, Asset>;
  },
): Promise<Uint8Array> {
  const { shift, assets, position } = input;
  const on = (signer: Signer) => elementsOn(signer.elements, position);
  const elements = input.signers.flatMap(on);
  const images: ImagePlacement[] = pageImageElements(elements)
    .filter((element) => assets.has(element.value!))
    .map((element) => ({ ...element, page: element.page + shift, ...assets.get(element.value!)! }));
  const uploadedPages = (input.pageCount ?? shift) - shift;
  return services.untrusted.run<Uint8Array>('prepareForSigningTask', {
    pdf: input.pdf,
    signers: input.signers.map((signer) => ({
      fieldName: fieldNameOf(signer),
      lockedFields: lockedFieldNames(on(signer)),
      signatureBoxes: signatureElements(on(signer)).map((element) => {
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
}
