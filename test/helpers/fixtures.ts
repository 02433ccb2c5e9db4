import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

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

/** Kept here for the tests that import it from fixtures; it lives in png.ts (side-effect free, shared with bench/). */
export { makePng } from './png';
