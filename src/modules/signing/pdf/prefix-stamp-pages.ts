import { PDFDocument } from 'pdf-lib';
import { updateIncrementally } from './incremental-update';

/**
 * Places the stamp certificates' pages, in order, before the uploaded document's pages, as one incremental
 * update: the uploaded bytes stay a prefix (signatures they carry stay valid), and the uploaded PDF stays the base
 * document (its catalog, forms, outlines and metadata survive). The certificate pages are copied object for
 * object, so their content streams are the procured bytes. Bytes in, bytes out: the service runs it in the worker
 * pool. (It lives with the PDF mechanics because the incremental writer does: stamps know no PDF internals.)
 */
export async function prefixStampPages(
  documentBytes: Uint8Array,
  certificates: Uint8Array[],
): Promise<{ bytes: Uint8Array; stampPages: number }> {
  let at = 0;
  const { updated } = await updateIncrementally(documentBytes, async (document) => {
    for (const certificateBytes of certificates) {
      const certificate = await PDFDocument.load(certificateBytes, { updateMetadata: false });
      const pages = await document.copyPages(certificate, certificate.getPageIndices());
      for (const page of pages) document.insertPage(at++, page);
    }
  });
  return { bytes: updated, stampPages: at };
}
