import { readFileSync } from 'node:fs';
import path from 'node:path';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';

/**
 * Faces for tests, from the demo folder of @vladmandic/face-api (no other face photos ship with the project):
 * - sample1.jpg .. sample6.jpg (1920 px wide) are all GROUP photos of women (3, 3, 3, 4, 5 and 4 faces), and
 *   no person is known to appear in two of them. So faces of one sample are certainly DIFFERENT people; the
 *   SAME person can only be one face cropped from a sample against another crop, rescale, re-encoding or
 *   brightness shift of that face (no second photo of anyone exists here); a whole sample is "several faces".
 * - screenshot-webcam.png is ONE frontal face, a man at his webcam (with landmark dots drawn on it): a
 *   different person from everyone in the samples, and a capture like the signer page's live photo.
 * - facemesh.png is a drawing of the 68 landmark points: a PNG with no face.
 * face-api is not sharp on these faces: faces 1 and 3 of sample 4 are 0.48 apart (score ~72), and across
 * samples face 2 of sample 1 and face 3 of sample 4 are 0.45 apart (~81), as close as same-person distances.
 * Clear-cut pairs for end-to-end tests: sampleFaceJpeg(6, 2) as the reference; the same crop rescaled or
 * relit as a matching live photo (distance 0.07-0.12, score ~99.8, liveness 100); sampleFaceJpeg(6, 3) (0.78, 3.7)
 * or the webcam photo (0.80, 3.2, liveness 80.8) as a non-matching one.
 */
export const SAMPLE_DIR = path.join(path.dirname(require.resolve('@vladmandic/face-api/package.json')), 'demo');

export type SampleNumber = 1 | 2 | 3 | 4 | 5 | 6;

export const samplePhotoPath = (n: SampleNumber) => path.join(SAMPLE_DIR, `sample${n}.jpg`);

export function samplePhoto(n: SampleNumber): Buffer {
  return readFileSync(samplePhotoPath(n));
}

export const WEBCAM_PHOTO_PATH = path.join(SAMPLE_DIR, 'screenshot-webcam.png');
export const LANDMARK_DRAWING_PATH = path.join(SAMPLE_DIR, 'facemesh.png');

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Every face of every sample, left to right, in the pixels of the full photo, as face-api's SSD detector found them. */
export const SAMPLE_FACES: Record<SampleNumber, Box[]> = {
  1: [box(414, 355, 178, 238), box(838, 421, 187, 227), box(1476, 200, 203, 241)],
  2: [box(361, 127, 153, 258), box(901, 218, 151, 235), box(1447, 153, 193, 243)],
  3: [box(585, 329, 199, 271), box(1075, 215, 221, 299), box(1514, 292, 170, 279)],
  4: [box(257, 184, 162, 246), box(664, 52, 187, 258), box(988, 180, 169, 228), box(1277, 144, 145, 243)],
  5: [
    box(377, 859, 172, 300),
    box(597, 415, 167, 249),
    box(787, 109, 156, 212),
    box(1112, 198, 159, 237),
    box(1406, 390, 166, 270),
  ],
  6: [box(250, 467, 210, 291), box(681, 321, 159, 306), box(1181, 305, 188, 280), box(1487, 263, 212, 294)],
};

function box(x: number, y: number, width: number, height: number): Box {
  return { x, y, width, height };
}

/**
 * The faces face-api still finds once cropped with sampleFace(): all but 2/0 (a near profile) and 4/0, which
 * the detector only sees with the rest of their photo around them.
 */
export const CROPPABLE_FACES: Record<SampleNumber, number[]> = {
  1: [0, 1, 2],
  2: [1, 2],
  3: [0, 1, 2],
  4: [1, 2, 3],
  5: [0, 1, 2, 3, 4],
  6: [0, 1, 2, 3],
};

/** Decoded RGBA pixels, what jpeg-js and pngjs both read and write. */
export interface Picture {
  width: number;
  height: number;
  data: Uint8Array;
}

export function readJpeg(bytes: Uint8Array): Picture {
  const { width, height, data } = jpeg.decode(bytes, { useTArray: true });
  return { width, height, data };
}

export function jpegBytes(picture: Picture, quality = 90): Buffer {
  return jpeg.encode({ ...picture, data: Buffer.from(picture.data) }, quality).data;
}

export function pngBytes(picture: Picture): Buffer {
  const png = new PNG({ width: picture.width, height: picture.height });
  png.data = Buffer.from(picture.data);
  return PNG.sync.write(png);
}

/** A picture of one colour, or of `paint(x, y)` per pixel (RGB). */
export function blankPicture(width: number, height: number, paint: (x: number, y: number) => [number, number, number]): Picture {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) data.set([...paint(x, y), 255], (y * width + x) * 4);
  }
  return { width, height, data };
}

/** The part of `picture` inside `area` (clipped to the picture). */
export function crop(picture: Picture, area: Box): Picture {
  const x0 = Math.max(0, Math.round(area.x));
  const y0 = Math.max(0, Math.round(area.y));
  const width = Math.min(picture.width, Math.round(area.x + area.width)) - x0;
  const height = Math.min(picture.height, Math.round(area.y + area.height)) - y0;
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    const from = ((y0 + y) * picture.width + x0) * 4;
    data.set(picture.data.subarray(from, from + width * 4), y * width * 4);
  }
  return { width, height, data };
}

/** Bilinear resampling to `width` (height keeps the aspect ratio). */
export function resize(picture: Picture, width: number): Picture {
  const height = Math.max(1, Math.round((picture.height * width) / picture.width));
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(picture.height - 1, ((y + 0.5) * picture.height) / height - 0.5);
    const y0 = Math.max(0, Math.floor(sy));
    const y1 = Math.min(picture.height - 1, y0 + 1);
    for (let x = 0; x < width; x++) {
      const sx = Math.min(picture.width - 1, ((x + 0.5) * picture.width) / width - 0.5);
      const x0 = Math.max(0, Math.floor(sx));
      const x1 = Math.min(picture.width - 1, x0 + 1);
      const [fx, fy] = [Math.max(0, sx - x0), Math.max(0, sy - y0)];
      for (let c = 0; c < 4; c++) {
        const at = (px: number, py: number) => picture.data[(py * picture.width + px) * 4 + c];
        const top = at(x0, y0) * (1 - fx) + at(x1, y0) * fx;
        const bottom = at(x0, y1) * (1 - fx) + at(x1, y1) * fx;
        data[(y * width + x) * 4 + c] = Math.round(top * (1 - fy) + bottom * fy);
      }
    }
  }
  return { width, height, data };
}

/** Adds `delta` to every colour channel (clamped). */
export function brighten(picture: Picture, delta: number): Picture {
  const data = picture.data.map((value, i) => (i % 4 === 3 ? value : Math.min(255, Math.max(0, value + delta))));
  return { ...picture, data };
}

/** `picture` pasted at (x, y) on a canvas of the given size and colour. */
export function placeOn(picture: Picture, width: number, height: number, at: { x: number; y: number }, colour = 255): Picture {
  const canvas = blankPicture(width, height, () => [colour, colour, colour]);
  for (let y = 0; y < picture.height && at.y + y < height; y++) {
    const row = picture.data.subarray(y * picture.width * 4, (y * picture.width + Math.min(picture.width, width - at.x)) * 4);
    canvas.data.set(row, ((at.y + y) * width + at.x) * 4);
  }
  return canvas;
}

const decodedSamples = new Map<SampleNumber, Picture>();

/**
 * Face `index` (left to right) of sample `n`: a square `margin` times the face box's longer side, centred on
 * the face. The default margin shows the head and shoulders and no neighbour's face (from 2.5 on, parts of
 * neighbours' faces come in; below 2 the detector misses more of these party-photo faces).
 */
export function sampleFace(n: SampleNumber, index: number, margin = 2): Picture {
  let photo = decodedSamples.get(n);
  if (!photo) decodedSamples.set(n, (photo = readJpeg(samplePhoto(n))));
  const face = SAMPLE_FACES[n][index];
  const side = Math.max(face.width, face.height) * margin;
  const centre = { x: face.x + face.width / 2, y: face.y + face.height / 2 };
  return crop(photo, { x: centre.x - side / 2, y: centre.y - side / 2, width: side, height: side });
}

/** `sampleFace` as JPEG bytes, what a signer's reference photo upload would be. */
export function sampleFaceJpeg(n: SampleNumber, index: number, quality = 90): Buffer {
  return jpegBytes(sampleFace(n, index), quality);
}
