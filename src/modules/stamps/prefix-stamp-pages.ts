import { PDFDocument } from 'pdf-lib';
import type { BlobStore } from '../../platform/storage/blob-store';

/**
 * Places the stamp certificates' pages, in order, before the uploaded document's pages. The uploaded PDF
 * stays the base document (its catalog, forms, outlines and metadata survive); the certificate pages are
 * copied object for object, so their content streams are the procured bytes. Saved without object streams,
 * as the signing step needs.
 */
export async function prefixStampPages(
  blobs: BlobStore,
  documentKey: string,
  stampKeys: string[],
): Promise<{ bytes: Uint8Array; stampPages: number }> {
  const document = await PDFDocument.load(await blobs.getBytes(documentKey), { updateMetadata: false });
  let at = 0;
  for (const key of stampKeys) {
    const certificate = await PDFDocument.load(await blobs.getBytes(key), { updateMetadata: false });
    const pages = await document.copyPages(certificate, certificate.getPageIndices());
    for (const page of pages) document.insertPage(at++, page);
  }
  return { bytes: await document.save({ useObjectStreams: false }), stampPages: at };
}
