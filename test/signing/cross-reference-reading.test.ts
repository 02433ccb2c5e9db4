import { PDFDocument, PDFName } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { createRootCa, issueSigningCertificate } from '../../src/modules/signing/certificates';
import { signDetachedCms, type SigningIdentity } from '../../src/modules/signing/cms-sign';
import { pageCountThroughSections } from '../../src/platform/pdf-structure';
import { prepareForSigning } from '../../src/modules/signing/pdf/prepare-for-signing';
import { signIncrementally } from '../../src/modules/signing/pdf/sign-incrementally';
import { withObjectStreams } from '../helpers/external-signer';
import { corpusFile, corpusPdfs } from '../helpers/fixtures';
import { hasPdfsig, hasQpdf, pdfsigReport, qpdfCheck } from '../helpers/pdf-signatures';

/**
 * Updates read a document through its cross-reference sections (src/modules/signing/pdf/lazy-document.ts), object by
 * object as the change looks them up, instead of pdf-lib's scan of every object. What readers see is what the sections
 * say: these cases differ from a scan, and poppler and qpdf judge the results.
 */
const root = createRootCa('Cross-reference Test Root', 'Tests');
const signer = issueSigningCertificate(
  root,
  { commonName: 'Cross-reference Signer' },
  { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000) },
);
const identity: SigningIdentity = {
  privateKeyPem: signer.privateKeyPem,
  certificatePem: signer.certificatePem,
  chainPems: [root.certificatePem],
};
const BOX = { page: 0, x: 72, y: 600, width: 180, height: 50 };

async function prepareAndSign(pdf: Uint8Array): Promise<Buffer> {
  const prepared = await prepareForSigning(pdf, [{ fieldName: 'reader', signatureBoxes: [BOX] }]);
  return Buffer.from(
    await signIncrementally(prepared, {
      fieldName: 'reader',
      signerName: 'Cross-reference Signer',
      time: new Date(),
      appearanceLines: ['Digitally signed by Cross-reference Signer'],
      sign: (ranges) => signDetachedCms(ranges, identity),
    }),
  );
}

function judged(signed: Buffer, original: Uint8Array): void {
  expect(signed.subarray(0, original.length).equals(Buffer.from(original))).toBe(true);
  if (hasQpdf) qpdfCheck(signed);
  if (hasPdfsig) {
    const report = pdfsigReport(signed);
    expect(report.map((entry) => [entry.fieldName, entry.valid, entry.total])).toEqual([['reader', true, true]]);
  }
}

describe('updates read through the cross-reference sections', () => {
  it('object streams and a PNG-predicted cross-reference stream (as qpdf and Acrobat write them): signed', async () => {
    const compressed = withObjectStreams(corpusFile('004-pdflatex-4-pages/pdflatex-4-pages.pdf'));
    expect(compressed.toString('latin1')).toMatch(/\/Predictor 12/);
    expect(pageCountThroughSections(compressed)).toBe(4);
    judged(await prepareAndSign(compressed), compressed);
  });

  it('an object left in the file after its end, listed by no section, is not what the update reads', async () => {
    // The prepared document's catalog (listed in its last section) holds the signature field. A second catalog
    // without it, numbered the same, trails the file: a scan of every object (pdf-lib's load) takes that one.
    const prepared = Buffer.from(
      await prepareForSigning(corpusFile('001-trivial/minimal-document.pdf'), [{ fieldName: 'reader', signatureBoxes: [BOX] }]),
    );
    const doc = await PDFDocument.load(prepared, { updateMetadata: false });
    const catalog = doc.context.trailerInfo.Root!.toString().replace(' R', '');
    const pages = doc.catalog.get(PDFName.of('Pages'))!.toString();
    const trailed = Buffer.concat([prepared, Buffer.from(`\n${catalog} obj\n<< /Type /Catalog /Pages ${pages} >>\nendobj\n`)]);
    const scanned = await PDFDocument.load(trailed, { updateMetadata: false });
    expect(scanned.catalog.get(PDFName.of('AcroForm'))).toBeUndefined();

    const signed = await signIncrementally(trailed, {
      fieldName: 'reader',
      signerName: 'Cross-reference Signer',
      time: new Date(),
      appearanceLines: ['Digitally signed by Cross-reference Signer'],
      sign: (ranges) => signDetachedCms(ranges, identity),
    });
    judged(Buffer.from(signed), trailed);
  });

  it('a table whose offsets lead to no objects: the document is read whole, as pdf-lib repairs it, and signed', async () => {
    const original = corpusFile('012-libreoffice-form/libreoffice-form.pdf');
    // Every in-use entry of the last table moved 7 bytes on: no entry finds its object's header.
    const text = original.toString('latin1');
    const table = text.lastIndexOf('\nxref');
    const shifted =
      text.slice(0, table) +
      text
        .slice(table)
        .replace(
          /^(\d{10}) (\d{5}) n/gm,
          (_, offset: string, generation: string) => `${String(Number(offset) + 7).padStart(10, '0')} ${generation} n`,
        );
    const broken = Buffer.from(shifted, 'latin1');
    expect(broken.length).toBe(original.length);
    expect(pageCountThroughSections(broken)).toBeUndefined();
    const signed = await prepareAndSign(broken);
    expect(signed.subarray(0, broken.length).equals(broken)).toBe(true);
    if (hasPdfsig) expect(pdfsigReport(signed).map((entry) => entry.valid)).toEqual([true]);
  });

  it("every corpus document (26 writers) is read through its sections, to pdf-lib's page count", async () => {
    // Damaged beyond recovery (refused at upload): its sections cannot be followed either.
    const unreadable = '017-unreadable-meta-data/unreadablemetadata.pdf';
    for (const entry of corpusPdfs().filter((candidate) => !candidate.encrypted && candidate.path !== unreadable)) {
      const bytes = corpusFile(entry.path);
      const scanned = (await PDFDocument.load(bytes, { updateMetadata: false })).getPageCount();
      expect([entry.path, pageCountThroughSections(bytes)]).toEqual([entry.path, scanned]);
    }
    expect(pageCountThroughSections(corpusFile(unreadable))).toBeUndefined();
  });
});
