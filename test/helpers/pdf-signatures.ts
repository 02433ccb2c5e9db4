import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { verifyDetachedCms, type CmsVerification } from '../../src/modules/signing/cms-verify';

export interface EmbeddedSignature {
  byteRange: [number, number, number, number];
  cms: Buffer;
  /** Whether the signed ranges reach the end of the file. */
  coversWholeFile: boolean;
  verification: CmsVerification;
}

/** Every signature in a PDF, checked in-process: ByteRange, digest, CMS signature. */
export async function signaturesOf(pdf: Buffer): Promise<EmbeddedSignature[]> {
  const text = pdf.toString('latin1');
  const found: EmbeddedSignature[] = [];
  const pattern = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const range = match.slice(1, 5).map(Number) as [number, number, number, number];
    // The whole /Contents: the CMS and the zero padding after it (the verifier reads the DER length itself).
    const cms = Buffer.from(text.slice(range[1] + 1, range[2] - 1), 'hex');
    const content = Buffer.concat([pdf.subarray(range[0], range[0] + range[1]), pdf.subarray(range[2], range[2] + range[3])]);
    found.push({
      byteRange: range,
      cms,
      coversWholeFile: range[2] + range[3] === pdf.length,
      verification: await verifyDetachedCms(cms, content),
    });
  }
  return found;
}

export const hasPdfsig = spawnSync('pdfsig', ['-v']).status === 0;
export const hasQpdf = spawnSync('qpdf', ['--version']).status === 0;

/** poppler's own verdict, one entry per signature: valid or not, and whether it covers the whole document. */
export function pdfsigReport(pdf: Buffer): { valid: boolean; total: boolean }[] {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pdfsig-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    // pdfsig exits 0 even on a digest mismatch: read what it says.
    const output = spawnSync('pdfsig', [file], { encoding: 'utf8' }).stdout;
    return output
      .split(/Signature #\d+:/)
      .slice(1)
      .map((block) => ({
        valid: /Signature Validation: Signature is Valid\./.test(block),
        total: /Total document signed/.test(block),
      }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function qpdfCheck(pdf: Buffer): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'qpdf-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    execFileSync('qpdf', ['--check', file], { stdio: 'pipe' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
