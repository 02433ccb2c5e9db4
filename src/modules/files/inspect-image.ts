import { PDFDocument } from 'pdf-lib';
import { AppError } from '../../platform/errors';

export const ASSET_ERROR_MESSAGES = {
  empty: 'upload failed: empty file',
  format: 'upload failed: unsupported image format (JPEG or PNG only)',
} as const;

export interface ImageFacts {
  mime: 'image/png' | 'image/jpeg';
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Assets are judged by their bytes, never by name or declared type, and only accepted when pdf-lib can
 * embed them: they end up drawn into PDFs (image elements, signature appearances).
 */
export async function inspectImage(bytes: Uint8Array): Promise<ImageFacts> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const isPng = buffer.subarray(0, 8).equals(PNG_SIGNATURE);
  const isJpeg = buffer[0] === 0xff && buffer[1] === 0xd8 && buffer[2] === 0xff;
  if (!isPng && !isJpeg) throw invalidAsset('the bytes are neither PNG nor JPEG');
  try {
    const document = await PDFDocument.create();
    // pdf-lib reads a JPEG through a DataView over `bytes.buffer` from offset 0: a Buffer that is a slice of
    // a larger one (Node's pool, a request body) must be copied to an ArrayBuffer of its own first.
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
    const image = isPng ? await document.embedPng(own) : await document.embedJpg(own);
    if (!(image.width > 0 && image.height > 0)) throw new Error('image has no size');
    return { mime: isPng ? 'image/png' : 'image/jpeg', width: image.width, height: image.height };
  } catch (error) {
    throw invalidAsset(`the ${isPng ? 'PNG' : 'JPEG'} image cannot be decoded`, error);
  }
}

function invalidAsset(problem: string, cause?: unknown): AppError {
  return new AppError('invalid_asset', { message: ASSET_ERROR_MESSAGES.format, errors: [{ field: 'file', problem }], cause });
}
