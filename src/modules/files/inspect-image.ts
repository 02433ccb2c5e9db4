import { createInflate, crc32 } from 'node:zlib';
import { PDFDocument } from 'pdf-lib';
import { AppError } from '../../platform/errors';

export const ASSET_ERROR_MESSAGES = {
  empty: 'upload failed: empty file',
  format: 'upload failed: unsupported image format (JPEG or PNG only)',
} as const;

/**
 * The largest image accepted (uploaded assets, and signers' face photos, which go through inspectImage too),
 * judged from the size its header declares, before anything is decoded: at most 40 megapixels (8000 x 5000,
 * beyond any phone camera) and at most 10000 pixels on a side. Decoding is what costs: a 109 KB PNG declaring
 * 30000 x 30000 pixels held the event loop for 110 s (and 7 GB) in pdf-lib's decoder. Over the budget,
 * upload-asset refuses it like any image the service cannot use: `invalid_asset`, with the contract's
 * unsupported-format text on REST, and a `problem` that gives the declared size and the budget. Not a
 * setting: one number that is never in anyone's way, and the face photo check has no configuration at hand.
 */
export const IMAGE_PIXEL_BUDGET = { maxPixels: 40_000_000, maxSide: 10_000 } as const;

export interface ImageFacts {
  mime: 'image/png' | 'image/jpeg';
  width: number;
  height: number;
}

export type ImageHeader = ImageFacts;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Assets are judged by their bytes, never by name or declared type, and only accepted when pdf-lib can
 * embed them: they end up drawn into PDFs (image elements, signature appearances). The declared size is
 * checked against IMAGE_PIXEL_BUDGET first, from the header alone; only then does pdf-lib see the bytes.
 */
export async function inspectImage(bytes: Uint8Array): Promise<ImageFacts> {
  const header = readImageHeader(bytes);
  const { maxPixels, maxSide } = IMAGE_PIXEL_BUDGET;
  if (header.width > maxSide || header.height > maxSide || header.width * header.height > maxPixels) {
    throw invalidAsset(
      `the image declares ${header.width} x ${header.height} pixels; at most ${maxPixels} pixels and ${maxSide} on a side are accepted`,
    );
  }
  const isPng = header.mime === 'image/png';
  if (isPng) await checkPngData(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), header);
  try {
    const document = await PDFDocument.create();
    // pdf-lib reads a JPEG through a DataView over `bytes.buffer` from offset 0: a Buffer that is a slice of
    // a larger one (Node's pool, a request body) must be copied to an ArrayBuffer of its own first.
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
    const image = isPng ? await document.embedPng(own) : await document.embedJpg(own);
    if (!(image.width > 0 && image.height > 0)) throw new Error('image has no size');
    // pdf-lib walks JPEG markers its own, looser way (it takes DAC or JPG segments for frame headers): an
    // image it reads another size from than the header is ambiguous, and would be drawn wrongly.
    if (image.width !== header.width || image.height !== header.height) {
      throw new Error(`pdf-lib reads ${image.width} x ${image.height}, the header says ${header.width} x ${header.height}`);
    }
    return { mime: header.mime, width: image.width, height: image.height };
  } catch (error) {
    throw invalidAsset(`the ${isPng ? 'PNG' : 'JPEG'} image cannot be decoded`, error);
  }
}

/**
 * The type and declared size of a PNG or JPEG, from its header only; `invalid_asset` for anything else,
 * including truncated or garbled headers.
 *
 * Hand-written on purpose, and small: the point is that no decoder runs before the pixel budget is checked,
 * and the decoders at hand (pdf-lib's, pngjs, jpeg-js) size their buffers from the header and decode the
 * whole image before they say anything about it. Reading two numbers from a header needs no library.
 */
export function readImageHeader(bytes: Uint8Array): ImageHeader {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (buffer.length >= 8 && buffer.subarray(0, 8).equals(PNG_SIGNATURE)) return readPngHeader(buffer);
  if (buffer.length >= 3 && buffer[0] === 0xff && buffer[1] === 0xd8 && buffer[2] === 0xff) return readJpegHeader(buffer);
  throw invalidAsset('the bytes are neither PNG nor JPEG');
}

/** PNG: the IHDR chunk must come first, right after the signature; width and height are its first 8 bytes. */
function readPngHeader(buffer: Buffer): ImageHeader {
  // signature (8), chunk length (4), chunk type (4), IHDR data (13), CRC (4)
  if (buffer.length < 33) throw invalidAsset('the PNG header is truncated');
  if (buffer.readUInt32BE(8) !== 13 || buffer.toString('latin1', 12, 16) !== 'IHDR') {
    throw invalidAsset('the PNG does not begin with its IHDR header');
  }
  const width = buffer.readUInt32BE(16);
  const height = buffer.readUInt32BE(20);
  // The PNG specification bounds both by 2^31 - 1 and forbids 0.
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) {
    throw invalidAsset(`the PNG header declares an impossible size (${width} x ${height})`);
  }
  return { mime: 'image/png', width, height };
}

/** Channels per colour type, and the bit depths the PNG specification allows for it. */
const PNG_COLOUR_TYPES: Record<number, { channels: number; depths: number[] }> = {
  0: { channels: 1, depths: [1, 2, 4, 8, 16] },
  2: { channels: 3, depths: [8, 16] },
  3: { channels: 1, depths: [1, 2, 4, 8] },
  4: { channels: 2, depths: [8, 16] },
  6: { channels: 4, depths: [8, 16] },
};

/** Adam7: x start, y start, x step, y step of the seven passes. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/**
 * The PNG's structure and compressed data, checked before pdf-lib decodes it: pdf-lib's PNG decoder (UPNG,
 * with a hand-written inflate) never checks a bound. A PNG cut inside its IDAT, or with garbage for data,
 * held the event loop forever; an APNG frame (fcTL) declares a size of its own that UPNG decodes too,
 * outside the pixel budget. So: every chunk must lie within the bytes with a correct CRC, up to IEND; no
 * APNG chunks; the IHDR fields are valid; and the IDAT stream inflates (Node's zlib, in its thread pool,
 * output counted and dropped) to exactly the number of bytes the header implies, no more.
 */
async function checkPngData(buffer: Buffer, header: ImageHeader): Promise<void> {
  const depth = buffer[24];
  const colourType = buffer[25];
  const interlace = buffer[28];
  const colour = PNG_COLOUR_TYPES[colourType];
  if (!colour || !colour.depths.includes(depth) || buffer[26] !== 0 || buffer[27] !== 0 || interlace > 1) {
    throw invalidAsset('the PNG header is invalid (colour type, bit depth, compression, filter or interlace)');
  }
  const idat: Buffer[] = [];
  let palette = false;
  let ended = false;
  for (let position = 8; position < buffer.length && !ended;) {
    if (position + 12 > buffer.length) throw invalidAsset('the PNG is truncated (inside a chunk header)');
    const length = buffer.readUInt32BE(position);
    const type = buffer.toString('latin1', position + 4, position + 8);
    const end = position + 12 + length;
    if (length > 0x7fffffff || end > buffer.length) throw invalidAsset(`the PNG is truncated (inside its ${type} chunk)`);
    if (crc32(buffer.subarray(position + 4, position + 8 + length)) >>> 0 !== buffer.readUInt32BE(end - 4)) {
      throw invalidAsset(`the PNG is damaged (the CRC of its ${type} chunk is wrong)`);
    }
    if (type === 'acTL' || type === 'fcTL' || type === 'fdAT') throw invalidAsset('animated PNGs are not accepted');
    if (type === 'PLTE') palette = true;
    if (type === 'IDAT') idat.push(buffer.subarray(position + 8, position + 8 + length));
    ended = type === 'IEND';
    position = end;
  }
  if (!ended) throw invalidAsset('the PNG is truncated (no IEND chunk)');
  if (idat.length === 0) throw invalidAsset('the PNG has no image data');
  if (colourType === 3 && !palette) throw invalidAsset('the PNG has no palette for its indexed colours');

  const bitsPerPixel = depth * colour.channels;
  const rows = (width: number, height: number) =>
    width > 0 && height > 0 ? height * (1 + Math.ceil((width * bitsPerPixel) / 8)) : 0;
  const expected =
    interlace === 0
      ? rows(header.width, header.height)
      : ADAM7.reduce(
          (sum, [x0, y0, dx, dy]) => sum + rows(Math.ceil((header.width - x0) / dx), Math.ceil((header.height - y0) / dy)),
          0,
        );
  const inflated = await new Promise<number>((resolve, reject) => {
    const inflate = createInflate();
    let total = 0;
    inflate.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > expected) inflate.destroy(new Error('more image data than the header declares'));
    });
    inflate.on('error', reject);
    inflate.on('end', () => resolve(total));
    for (const part of idat) inflate.write(part);
    inflate.end();
  }).catch((error: unknown) => {
    throw invalidAsset(`the PNG image data is damaged (${(error as Error).message})`, error);
  });
  if (inflated !== expected) {
    throw invalidAsset(`the PNG image data is damaged (${inflated} bytes where the header implies ${expected})`);
  }
}

/** JPEG markers that stand alone, without a length: TEM, RST0..RST7, SOI. */
const isStandalone = (marker: number) => marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8);
/** SOF0..SOF15 (frame headers), except DHT (C4), JPG (C8) and DAC (CC), which share the range. */
const isStartOfFrame = (marker: number) =>
  marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/**
 * JPEG: walks the marker segments after SOI (APPn, COM, DQT, DHT...), each skipped by its length, up to the
 * first frame header (SOFn), which holds height and width. A scan (SOS) or the end (EOI) before any frame
 * header, a byte that is no marker where one must be, a length that points backwards or past the end:
 * refused. Every step moves forward by at least two bytes, so the walk ends on any input.
 */
function readJpegHeader(buffer: Buffer): ImageHeader {
  let position = 2;
  while (position < buffer.length) {
    if (buffer[position] !== 0xff) throw invalidAsset('the JPEG is malformed (a marker was expected)');
    // Any number of 0xFF fill bytes may precede a marker.
    while (position < buffer.length && buffer[position] === 0xff) position++;
    if (position >= buffer.length) break;
    const marker = buffer[position++];
    if (marker === 0x00) throw invalidAsset('the JPEG is malformed (a stuffed byte outside a scan)');
    if (isStandalone(marker)) continue;
    if (marker === 0xd9 || marker === 0xda) throw invalidAsset('the JPEG has no frame header before its image data');
    if (position + 2 > buffer.length) break;
    const length = buffer.readUInt16BE(position);
    if (length < 2) throw invalidAsset('the JPEG is malformed (a segment length under 2)');
    if (isStartOfFrame(marker)) {
      // length (2), sample precision (1), number of lines (2), samples per line (2), components (1)
      if (length < 8 || position + 7 > buffer.length) break;
      const height = buffer.readUInt16BE(position + 3);
      const width = buffer.readUInt16BE(position + 5);
      // Height 0 means "given later by a DNL marker": nothing to budget from the header, and nothing pdf-lib can embed.
      if (width === 0 || height === 0) {
        throw invalidAsset(`the JPEG frame header declares no size (${width} x ${height})`);
      }
      return { mime: 'image/jpeg', width, height };
    }
    position += length;
  }
  throw invalidAsset('the JPEG is truncated before its frame header');
}

function invalidAsset(problem: string, cause?: unknown): AppError {
  return new AppError('invalid_asset', { message: ASSET_ERROR_MESSAGES.format, errors: [{ field: 'file', problem }], cause });
}
