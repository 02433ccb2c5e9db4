import { PDFArray, PDFDict, PDFName, PDFNumber, PDFRef, PDFString, type PDFDocument } from 'pdf-lib';
import { updateIncrementally } from './incremental-update';
import { addFormFields, fieldLock, type FormFieldLayout } from './form-fields';
import { addAnnotation, pageAt, pdfRect, type Box } from './page-boxes';

export type { Box } from './page-boxes';

export interface SignatureBox extends Box {
  /** A wet-signature image drawn inside this placement's appearance when the signer signs. */
  wetImage?: { bytes: Uint8Array; mime: 'image/png' | 'image/jpeg' };
}

export interface SignerLayout {
  /** The signature field's name (`/T`); signing finds the field by it. */
  fieldName: string;
  /** Where the signature appearance goes; none: an invisible signature. */
  signatureBoxes: SignatureBox[];
  /** The form fields this signer's signature locks (FieldMDP): the ones they fill, or see filled for them. */
  lockedFields?: string[];
}

/** Annotation key naming the image XObject a placement's appearance shows (a second-class name). */
export const WET_IMAGE_KEY = 'EsignWetImage';
/** The field's further placements (stamp annotations), by reference; fields prepared before it have none. */
export const PLACEMENTS_KEY = 'EsignPlacements';

export interface ImagePlacement extends Box {
  bytes: Uint8Array;
  mime: 'image/png' | 'image/jpeg';
}

/**
 * Prepares a document before its session's first signature, as one incremental update (the document's bytes stay
 * a prefix, so signatures it already carries stay valid): `image` elements are drawn, the form fields signers fill
 * are made (form-fields.ts), and every signer gets an empty signature field with one widget per placement, locking
 * their form fields.
 */
export async function prepareForSigning(
  pdf: Uint8Array,
  signers: SignerLayout[],
  images: ImagePlacement[] = [],
  formFields: FormFieldLayout[] = [],
): Promise<Uint8Array> {
  const { updated } = await updateIncrementally(pdf, (doc) => addFields(doc, signers, images, formFields));
  return updated;
}

async function addFields(
  doc: PDFDocument,
  signers: SignerLayout[],
  images: ImagePlacement[],
  formFields: FormFieldLayout[],
): Promise<void> {
  const pages = doc.getPages();

  for (const image of images) {
    const page = pages[image.page];
    const embedded = image.mime === 'image/png' ? await doc.embedPng(image.bytes) : await doc.embedJpg(image.bytes);
    const [llx, lly, urx, ury] = pdfRect(page, image);
    page.drawImage(embedded, { x: llx, y: lly, width: urx - llx, height: ury - lly });
  }

  const fields = signatureFieldList(doc);
  await addFormFields(doc, doc.catalog.lookup(PDFName.of('AcroForm'), PDFDict), fields, formFields);
  for (const signer of signers) await addSignatureField(doc, fields, signer);
}

/** The AcroForm's /Fields (both made when missing), with SigFlags set: the list a signature field joins. */
export function signatureFieldList(doc: PDFDocument): PDFArray {
  const context = doc.context;
  let acroForm = doc.catalog.lookupMaybe(PDFName.of('AcroForm'), PDFDict);
  if (!acroForm) {
    acroForm = context.obj({ Fields: [] });
    doc.catalog.set(PDFName.of('AcroForm'), context.register(acroForm));
  }
  let fields = acroForm.lookupMaybe(PDFName.of('Fields'), PDFArray);
  if (!fields) {
    fields = context.obj([]);
    acroForm.set(PDFName.of('Fields'), fields);
  }
  // SignaturesExist | AppendOnly: viewers must keep later changes incremental.
  acroForm.set(PDFName.of('SigFlags'), PDFNumber.of(3));
  return fields;
}

/**
 * One signer's empty signature field, joined to `fields`. The field is its own widget, at the first placement
 * (hidden and empty when there is none: an invisible signature, or a document time-stamp); one signature per
 * signer, in the shape every reader understands. Further placements are stamp annotations named after the field.
 */
export async function addSignatureField(doc: PDFDocument, fields: PDFArray, signer: SignerLayout): Promise<PDFRef> {
  const context = doc.context;
  const [first, ...more] = signer.signatureBoxes;
  const page = pageAt(doc, first?.page ?? 0);
  const fieldRef = context.register(
    context.obj({
      FT: 'Sig',
      T: PDFString.of(signer.fieldName),
      Type: 'Annot',
      Subtype: 'Widget',
      Rect: first ? pdfRect(page, first) : [0, 0, 0, 0],
      // Print and Locked; an invisible signature is also Hidden.
      F: first ? 4 | 128 : 2 | 4 | 128,
      P: page.ref,
    }),
  );
  addAnnotation(page, fieldRef);
  fields.push(fieldRef);
  if (signer.lockedFields?.length)
    context.lookup(fieldRef, PDFDict).set(PDFName.of('Lock'), context.register(fieldLock(doc, signer.lockedFields)));
  if (first?.wetImage) await attachWetImage(doc, fieldRef, first.wetImage);
  // Further placements show the same appearance: stamp annotations named after the field, empty until signed, and
  // listed in the field (PLACEMENTS_KEY) so that signing finds them without reading every page.
  const placements = context.obj([]);
  context.lookup(fieldRef, PDFDict).set(PDFName.of(PLACEMENTS_KEY), placements);
  for (const [index, box] of more.entries()) {
    const extraPage = pageAt(doc, box.page);
    const stamp = context.obj({
      Type: 'Annot',
      Subtype: 'Stamp',
      Rect: pdfRect(extraPage, box),
      F: 4 | 128,
      P: extraPage.ref,
      NM: PDFString.of(`${signer.fieldName}#${index + 1}`),
    });
    const stampRef = context.register(stamp);
    addAnnotation(extraPage, stampRef);
    placements.push(stampRef);
    if (box.wetImage) await attachWetImage(doc, stampRef, box.wetImage);
  }
  return fieldRef;
}

/** Embeds the image now, so that signing only has to reference it from the appearance. */
async function attachWetImage(
  doc: PDFDocument,
  annotationRef: PDFRef,
  image: NonNullable<SignatureBox['wetImage']>,
): Promise<void> {
  const embedded = image.mime === 'image/png' ? await doc.embedPng(image.bytes) : await doc.embedJpg(image.bytes);
  doc.context.lookup(annotationRef, PDFDict).set(PDFName.of(WET_IMAGE_KEY), embedded.ref);
}
