import { EncryptedPDFError, PDFDocument } from 'pdf-lib';
import { readFile } from 'node:fs/promises';
import { AppError } from '../../platform/errors';
import { SparseFile } from '../../platform/storage/sparse-file';
import { pageCountThroughSections } from '../../platform/pdf-structure';

export interface PdfFacts {
  pageCount: number;
}

const ENCRYPTED = 'the PDF is encrypted (password-protected); upload it without protection';

/**
 * A PDF is accepted only when pdf-lib (the engine that later prefixes stamp pages and prepares it for
 * signing) can parse it and reach at least one page. Encrypted PDFs are refused: without the password
 * nothing can be added to them, so they could never be signed. The structure is read where the file's
 * cross-reference sections place it (the trailer, the catalog, the page tree: what every later update reads),
 * not the pages' content and images; a file whose sections cannot be followed is parsed whole, as pdf-lib reads it.
 */
export async function inspectPdf(bytes: Uint8Array): Promise<PdfFacts> {
  return structureFacts(bytes) ?? inspectWhole(bytes);
}

/**
 * inspectPdf of a spooled upload: only the regions its structure occupies are read from disk (SparseFile), and the
 * file is read whole only when its sections cannot be followed.
 */
export async function inspectPdfFile(path: string): Promise<PdfFacts> {
  const facts = SparseFile.use(path, (file) => {
    file.fill(0, 1024);
    return structureFacts(file.bytes, file.fill);
  });
  return facts ?? inspectWhole(await readFile(path));
}

/** The facts read through the cross-reference sections; undefined when they cannot be (inspectWhole decides then). */
function structureFacts(bytes: Uint8Array, fill?: (start: number, end: number) => void): PdfFacts | undefined {
  assertPdfHeader(bytes);
  let pageCount: number | undefined;
  try {
    pageCount = pageCountThroughSections(bytes, fill);
  } catch (error) {
    if (error instanceof EncryptedPDFError) {
      throw new AppError('invalid_pdf', { errors: [{ field: 'file', problem: ENCRYPTED }], cause: error });
    }
  }
  return pageCount !== undefined && pageCount > 0 ? { pageCount } : undefined;
}

/** The verdict of pdf-lib's own load, which scans every object: for files whose sections cannot be followed. */
async function inspectWhole(bytes: Uint8Array): Promise<PdfFacts> {
  assertPdfHeader(bytes);
  let document: PDFDocument;
  try {
    document = await PDFDocument.load(bytes, { updateMetadata: false });
  } catch (error) {
    const problem = error instanceof EncryptedPDFError ? ENCRYPTED : 'the PDF cannot be parsed';
    throw new AppError('invalid_pdf', { errors: [{ field: 'file', problem }], cause: error });
  }
  let pageCount: number;
  try {
    pageCount = document.getPageCount();
  } catch (error) {
    throw new AppError('invalid_pdf', { errors: [{ field: 'file', problem: 'the page tree cannot be read' }], cause: error });
  }
  if (pageCount < 1) {
    throw new AppError('invalid_pdf', { errors: [{ field: 'file', problem: 'the PDF has no pages' }] });
  }
  return { pageCount };
}

function assertPdfHeader(bytes: Uint8Array): void {
  if (!startsWithPdfHeader(bytes)) {
    throw new AppError('invalid_pdf', { errors: [{ field: 'file', problem: 'no %PDF- header in the first 1024 bytes' }] });
  }
}

function startsWithPdfHeader(bytes: Uint8Array): boolean {
  // The header may follow some junk bytes (the PDF spec tolerates up to 1024 of them).
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024));
  return head.includes('%PDF-');
}
