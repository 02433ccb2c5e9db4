import { PDFArray, PDFName, type PDFPage, type PDFRef } from 'pdf-lib';

/** A placed box, in the API's units: PDF points from the top-left of the page, y down. */
export interface Box {
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * The PDF rectangle `[llx, lly, urx, ury]` of a box given from the top-left of the page's visible area
 * (its crop box). Rotated pages are placed in their unrotated coordinates.
 */
export function pdfRect(page: PDFPage, box: Box): [number, number, number, number] {
  const crop = page.getCropBox();
  const left = crop.x + box.x;
  const top = crop.y + crop.height - box.y;
  return [left, top - box.height, left + box.width, top];
}

/** Adds an annotation (a widget, a stamp) to the page's /Annots, made when missing. */
export function addAnnotation(page: PDFPage, ref: PDFRef): void {
  const annots = page.node.lookupMaybe(PDFName.of('Annots'), PDFArray);
  if (annots) annots.push(ref);
  else page.node.set(PDFName.of('Annots'), page.doc.context.obj([ref]));
}
