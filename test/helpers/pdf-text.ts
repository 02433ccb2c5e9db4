import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const hasPdftotext = spawnSync('pdftotext', ['-v']).status === 0;

/** What a reader sees on the pages (form fields' appearances included), as poppler's pdftotext extracts it. */
export function pdfText(pdf: Buffer, { layout = true }: { layout?: boolean } = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pdftotext-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    return execFileSync('pdftotext', [...(layout ? ['-layout'] : []), file, '-'], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
