import { EncryptedPDFError, PDFDocument } from 'pdf-lib';
import { AppError } from '../../platform/errors';

export interface PdfFacts {
  pageCount: number;
}

/**
 * A PDF is accepted only when pdf-lib (the engine that later prefixes stamp pages and prepares it for
 * signing) can parse it and reach at least one page. Encrypted PDFs are refused: without the password
 * nothing can be added to them, so they could never be signed.
 */
export async function inspectPdf(bytes: Uint8Array): Promise<PdfFacts> {
  if (!startsWithPdfHeader(bytes)) {
    throw new AppError('invalid_pdf', { errors: [{ field: 'file', problem: 'no %PDF- header in the first 1024 bytes' }] });
  }
  let document: PDFDocument;
  try {
    document = await PDFDocument.load(bytes, { updateMetadata: false });
  } catch (error) {
    const problem =
      error instanceof EncryptedPDFError
        ? 'the PDF is encrypted (password-protected); upload it without protection'
        : 'the PDF cannot be parsed';
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

function startsWithPdfHeader(bytes: Uint8Array): boolean {
  // The header may follow some junk bytes (the PDF spec tolerates up to 1024 of them).
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024));
  return head.includes('%PDF-');
}
