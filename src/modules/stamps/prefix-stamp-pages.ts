import { PDFDocument } from 'pdf-lib';

/**
 * Places the stamp certificates' pages, in order, before the uploaded document's pages. The uploaded PDF
 * stays the base document (its catalog, forms, outlines and metadata survive); the certificate pages are
 * copied object for object, so their content streams are the procured bytes. Saved without object streams,
 * as the signing step needs. Bytes in, bytes out: the service runs it in the worker pool.
 */
export async function prefixStampPages(
  documentBytes: Uint8Array,
  certificates: Uint8Array[],
): Promise<{ bytes: Uint8Array; stampPages: number }> {
  const document = await PDFDocument.load(documentBytes, { updateMetadata: false });
  let at = 0;
  for (const certificateBytes of certificates) {
    const certificate = await PDFDocument.load(certificateBytes, { updateMetadata: false });
    const pages = await document.copyPages(certificate, certificate.getPageIndices());
    for (const page of pages) document.insertPage(at++, page);
  }
  return { bytes: await document.save({ useObjectStreams: false }), stampPages: at };
}
