import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';

/** 8-bit RGB pixels, row by row. */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array;
}

export class UnreadableImageError extends Error {}

/** Beyond any phone camera; refusing earlier keeps a small compressed "image bomb" from allocating gigabytes. */
const MAX_MEGAPIXELS = 60;

const JPEG_MAGIC = [0xff, 0xd8, 0xff];
const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const startsWith = (bytes: Uint8Array, magic: number[]) => magic.every((byte, i) => bytes[i] === byte);

/** Decodes JPEG or PNG bytes in pure JS; anything else, or a broken file, is an UnreadableImageError. */
export function decodeImage(bytes: Uint8Array): RgbImage {
  if (startsWith(bytes, JPEG_MAGIC)) return decodeJpeg(bytes);
  if (startsWith(bytes, PNG_MAGIC)) return decodePng(bytes);
  throw new UnreadableImageError('not a JPEG or PNG image');
}

function decodeJpeg(bytes: Uint8Array): RgbImage {
  try {
    const { width, height, data } = jpeg.decode(bytes, {
      useTArray: true,
      formatAsRGBA: false,
      maxResolutionInMP: MAX_MEGAPIXELS,
      maxMemoryUsageInMB: MAX_MEGAPIXELS * 3 * 4,
    });
    if (!width || !height) throw new Error('no image data');
    return { width, height, data };
  } catch (error) {
    throw new UnreadableImageError(`not a readable JPEG (${(error as Error).message})`);
  }
}

function decodePng(bytes: Uint8Array): RgbImage {
  // IHDR always comes first: width and height are big-endian at offsets 16 and 20.
  const header = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (header.length < 24 || header.readUInt32BE(16) * header.readUInt32BE(20) > MAX_MEGAPIXELS * 1e6) {
    throw new UnreadableImageError(`not a readable PNG (truncated, or larger than ${MAX_MEGAPIXELS} megapixels)`);
  }
  let png: { width: number; height: number; data: Buffer };
  try {
    png = PNG.sync.read(header);
  } catch (error) {
    throw new UnreadableImageError(`not a readable PNG (${(error as Error).message})`);
  }
  // pngjs always hands back RGBA; transparent pixels are laid on white, as a browser would show them.
  const data = new Uint8Array(png.width * png.height * 3);
  for (let i = 0, o = 0; i < png.data.length; i += 4) {
    const alpha = png.data[i + 3] / 255;
    for (let c = 0; c < 3; c++) data[o++] = Math.round(png.data[i + c] * alpha + 255 * (1 - alpha));
  }
  return { width: png.width, height: png.height, data };
}

/**
 * Shrinks the image so that its longer side is at most `maxSide`, averaging every source pixel of each
 * output pixel (sampling would skip most pixels of a 12-megapixel photo and alias fine detail).
 */
export function downscale(image: RgbImage, maxSide: number): RgbImage {
  const scale = maxSide / Math.max(image.width, image.height);
  if (scale >= 1) return image;
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  const source = image.data;
  const data = new Uint8Array(width * height * 3);
  for (let y = 0, o = 0; y < height; y++) {
    const y0 = Math.floor((y * image.height) / height);
    const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * image.height) / height));
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor((x * image.width) / width);
      const x1 = Math.max(x0 + 1, Math.floor(((x + 1) * image.width) / width));
      let r = 0;
      let g = 0;
      let b = 0;
      for (let sy = y0; sy < y1; sy++) {
        for (let i = (sy * image.width + x0) * 3, end = (sy * image.width + x1) * 3; i < end; i += 3) {
          r += source[i];
          g += source[i + 1];
          b += source[i + 2];
        }
      }
      const count = (y1 - y0) * (x1 - x0);
      data[o++] = Math.round(r / count);
      data[o++] = Math.round(g / count);
      data[o++] = Math.round(b / count);
    }
  }
  return { width, height, data };
}
