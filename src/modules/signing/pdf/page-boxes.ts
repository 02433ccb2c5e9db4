import { PDFArray, PDFName, PDFPage, PDFPageLeaf, PDFPageTree, type PDFDocument, type PDFRef } from 'pdf-lib';

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

/**
 * The document's page `index` as doc.getPages() gives it. Page 0 is the tree's first leaf, found without reading the
 * other pages (an update reads its objects one by one: a 500-page contract's pages cost more than its signature);
 * any other page goes through getPages.
 */
export function pageAt(doc: PDFDocument, index: number): PDFPage {
  if (index !== 0) return doc.getPages()[index];
  const firstLeaf = (tree: PDFPageTree, depth: number): PDFPage | undefined => {
    // Depth-first, kids in order, as pdf-lib's traversal; a tree deeper than this is left to getPages.
    if (depth > 64) return undefined;
    for (const kidRef of tree.Kids().asArray()) {
      const kid = doc.context.lookup(kidRef);
      if (kid instanceof PDFPageLeaf) return PDFPage.of(kid, kidRef as PDFRef, doc);
      const found = kid instanceof PDFPageTree ? firstLeaf(kid, depth + 1) : undefined;
      if (found) return found;
    }
    return undefined;
  };
  return firstLeaf(doc.catalog.Pages(), 0) ?? doc.getPages()[0];
}
