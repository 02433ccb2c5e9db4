import { PDFDocument } from 'pdf-lib';
import { addSignatureField, signatureFieldList, type Box } from './prepare-for-signing';
import { buildSignatureUpdate, type PreparedSignature, type SignatureAppearance } from './sign-incrementally';

/**
 * One incremental update that appends `pages` (every page of that PDF, copied object for object) after the
 * document's last page, with a new signature field whose widget sits at `box` on the last appended page, and that
 * field's signature: the update's own signature covers the pages it adds. Nothing before the update changes, so
 * every earlier signature stays valid; the revision judge reads such an update as `pages_appended` (what the
 * earlier signers signed reads the same, page for page). A certificate of completion is appended this way.
 * The caller signs the prepared ranges and writes the CMS with `fillSignature`, as for any signature.
 */
export async function buildAppendedPagesSignatureUpdate(
  pdf: Uint8Array,
  pages: Uint8Array,
  appearance: SignatureAppearance,
  /** On the last appended page, in the API's units (from its top-left, y down); its `page` is ignored. */
  box: Box,
): Promise<PreparedSignature> {
  return buildSignatureUpdate(pdf, appearance, async (doc) => {
    const source = await PDFDocument.load(pages, { updateMetadata: false });
    const copied = await doc.copyPages(source, source.getPageIndices());
    for (const page of copied) doc.addPage(page);
    const last = doc.getPageCount() - 1;
    await addSignatureField(doc, signatureFieldList(doc), {
      fieldName: appearance.fieldName,
      signatureBoxes: [{ ...box, page: last }],
    });
  });
}
