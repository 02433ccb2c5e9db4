import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import { createRootCa, issueSigningCertificate } from '../src/modules/signing/certificates';
import { prepareForSigning } from '../src/modules/signing/pdf/prepare-for-signing';
import type { BenchRow, Measurement } from './measure';
import { sized } from './mode';

/** The documents' sizes in MB, and measured runs of each (after one dropped). */
const SIZES_MB = sized([1, 10, 50], [0.25, 1]);
const runsAt = (megabytes: number) => sized(megabytes >= 50 ? 3 : 5, 1);

/** A PDF of about `megabytes` MB: a few text pages and incompressible image data, as scanned contracts are. */
export async function documentOf(megabytes: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const pages = Math.max(3, megabytes * 2);
  const perPage = Math.floor((megabytes * 1024 * 1024) / pages);
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage([595, 842]);
    page.drawText(`Page ${i + 1} of a ${megabytes} MB agreement`, { x: 50, y: 780, size: 14, font });
    const side = Math.floor(Math.sqrt(perPage / 3));
    const image = doc.context.stream(randomBytes(side * side * 3), {
      Type: 'XObject',
      Subtype: 'Image',
      Width: side,
      Height: side,
      ColorSpace: 'DeviceRGB',
      BitsPerComponent: 8,
    });
    const ref = doc.context.register(image);
    page.node.setXObject(PDFName.of(`Im${i}`), ref);
    page.pushOperators();
  }
  return doc.save({ useObjectStreams: false });
}

/** Runs one measurement in a fresh process (the first run of each kind warms the disk cache and is dropped). */
function inChild(mode: 'sign' | 'baseline', file: string, identityFile: string, warmUpFile: string): Measurement {
  const result = spawnSync(
    process.execPath,
    ['--expose-gc', path.join(__dirname, 'signing-child.js'), mode, file, identityFile, warmUpFile],
    {
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) throw new Error(`bench child failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Measurement;
}

function bestOf(runs: number, measureOnce: () => Measurement): Measurement {
  measureOnce();
  const results = Array.from({ length: runs }, measureOnce);
  return { ms: Math.min(...results.map((r) => r.ms)), peakMB: Math.max(...results.map((r) => r.peakMB)) };
}

/**
 * A signature (the field found through the cross-reference sections, an appended update, the CMS over the two
 * ranges) against its physical limit: one SHA-256 pass over the same file and one RSA signature, each in a process of
 * its own so that its peak memory is the kernel's figure. Floor (issue 37): a signature costs at most twice that.
 */
export async function signingBenchmarks(): Promise<BenchRow[]> {
  const root = createRootCa('Bench Root', 'Bench');
  const signer = issueSigningCertificate(
    root,
    { commonName: 'Bench Signer' },
    { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000) },
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'esign-bench-'));
  const identityFile = path.join(dir, 'identity.json');
  writeFileSync(
    identityFile,
    JSON.stringify({
      privateKeyPem: signer.privateKeyPem,
      certificatePem: signer.certificatePem,
      chainPems: [root.certificatePem],
    }),
  );
  const rows: BenchRow[] = [];
  try {
    // Each child first does its work once on a small document (code compiled, OpenSSL's decoders loaded), as a
    // running service has, then measures the real one: a per-signature cost, not a process start-up cost.
    const warmUpFile = path.join(dir, 'warm-up.pdf');
    writeFileSync(
      warmUpFile,
      await prepareForSigning(await documentOf(0.05), [
        { fieldName: 'bench', signatureBoxes: [{ page: 0, x: 72, y: 600, width: 180, height: 50 }] },
      ]),
    );
    for (const megabytes of SIZES_MB) {
      const prepared = await prepareForSigning(await documentOf(megabytes), [
        { fieldName: 'bench', signatureBoxes: [{ page: 0, x: 72, y: 600, width: 180, height: 50 }] },
      ]);
      const file = path.join(dir, `${megabytes}.pdf`);
      writeFileSync(file, prepared);
      const runs = runsAt(megabytes);
      const baseline = bestOf(runs, () => inChild('baseline', file, identityFile, warmUpFile));
      const signature = bestOf(runs, () => inChild('sign', file, identityFile, warmUpFile));
      const ratio = signature.ms / baseline.ms;
      rows.push({
        name: `signature on a ${(prepared.length / 1024 / 1024).toFixed(1)} MB PDF`,
        figure: `${signature.ms.toFixed(1)} ms`,
        baseline: `${baseline.ms.toFixed(1)} ms: one SHA-256 pass + one RSA-2048 signature`,
        ratio,
        peakMB: signature.peakMB,
        floor: 'ratio <= 2.00',
        ok: ratio <= 2,
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
