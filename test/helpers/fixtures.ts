import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';

export const CORPUS_DIR = path.resolve(__dirname, '../fixtures/pdfs');

export interface CorpusEntry {
  path: string;
  absolute: string;
  pages: number;
  encrypted: boolean;
}

/** Every PDF of the shared corpus that is present on disk, with what files.json says about it. */
export function corpusPdfs(): CorpusEntry[] {
  const listed = JSON.parse(readFileSync(path.join(CORPUS_DIR, 'files.json'), 'utf8')).data as {
    path: string;
    pages: number;
    encrypted: boolean;
  }[];
  return listed
    .map((entry) => ({ ...entry, absolute: path.join(CORPUS_DIR, entry.path) }))
    .filter((entry) => {
      try {
        return statSync(entry.absolute).isFile();
      } catch {
        return false;
      }
    });
}

export function corpusFile(relative: string): Buffer {
  return readFileSync(path.join(CORPUS_DIR, relative));
}

export function allCorpusFileNames(): string[] {
  const found: string[] = [];
  for (const dir of readdirSync(CORPUS_DIR)) {
    const full = path.join(CORPUS_DIR, dir);
    if (!statSync(full).isDirectory()) continue;
    for (const file of readdirSync(full)) if (file.endsWith('.pdf')) found.push(`${dir}/${file}`);
  }
  return found.sort();
}

export const MINIMAL_PDF = corpusFile('001-trivial/minimal-document.pdf');

/** A real PNG (RGB, 8 bits) of the given size, encoded here with zlib. */
export function makePng(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc32 = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) rows[y * (width * 3 + 1) + 1 + x * 3] = (x * 255) / Math.max(1, width - 1);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
