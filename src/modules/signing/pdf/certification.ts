import { ParseSpeeds, PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber } from 'pdf-lib';

/**
 * A certified document's DocMDP permissions (ISO 32000-1 12.8.2.2, table 254): 1, no change at all; 2, filling in
 * forms and signing existing signature fields; 3, that, and annotations (and form fields) added, changed, deleted.
 * No level allows adding pages or changing page content.
 */
export type DocMdpPermissions = 1 | 2 | 3;

/** What a session is going to change in the document. */
export interface PlannedChanges {
  /** Pages put in front (stamp certificates). */
  addsPages: boolean;
  /** Drawing into a page's content (`image` elements). */
  drawsOnPages: boolean;
  /** Pages appended after the last signature (`append_certificate`: the certificate of completion). */
  appendsPages: boolean;
}

/**
 * The DocMDP permissions of a certified document: the catalog's /Perms /DocMDP names the certification signature,
 * whose /Reference holds a DocMDP transform with /TransformParams /P (2 when missing or not 1, 2 or 3). null for a
 * document that is not certified. It parses the whole (attacker-supplied) document: the service runs it in the
 * worker pool.
 */
export async function readCertification(pdf: Uint8Array): Promise<{ permissions: DocMdpPermissions } | null> {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, parseSpeed: ParseSpeeds.Fastest });
  const signature = doc.catalog.lookupMaybe(PDFName.of('Perms'), PDFDict)?.lookupMaybe(PDFName.of('DocMDP'), PDFDict);
  if (!signature) return null;
  let permissions: DocMdpPermissions = 2;
  for (const entry of signature.lookupMaybe(PDFName.of('Reference'), PDFArray)?.asArray() ?? []) {
    const reference = doc.context.lookup(entry);
    if (!(reference instanceof PDFDict) || reference.lookup(PDFName.of('TransformMethod')) !== PDFName.of('DocMDP')) continue;
    const p = reference.lookupMaybe(PDFName.of('TransformParams'), PDFDict)?.lookup(PDFName.of('P'));
    const value = p instanceof PDFNumber ? p.asNumber() : 2;
    permissions = value === 1 || value === 3 ? value : 2;
  }
  return { permissions };
}

/**
 * Why a certified document's permissions forbid what a session changes, or null when they allow it. A session
 * always adds its signature fields (with their widgets, and wet-signature images in their appearances): that
 * needs P=3. Stamp pages and `image` elements change pages, which no level allows.
 */
export function certificationRefusal(permissions: DocMdpPermissions, changes: PlannedChanges): string | null {
  if (permissions === 1) return 'the PDF is certified with no changes allowed (DocMDP P=1): it cannot be signed here';
  if (permissions === 2) {
    return 'the PDF is certified for form filling and signing of its existing fields only (DocMDP P=2); a session adds signature fields';
  }
  if (changes.addsPages) return 'the PDF is certified (DocMDP P=3): stamp pages cannot be added to it';
  if (changes.drawsOnPages) return 'the PDF is certified (DocMDP P=3): image elements would change its page content';
  if (changes.appendsPages)
    return 'the PDF is certified (DocMDP P=3): a certificate of completion cannot be appended to it (append_certificate)';
  return null;
}
