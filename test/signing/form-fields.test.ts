import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFString, type PDFRef } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRootCa, issueSigningCertificate } from '../../src/modules/signing/certificates';
import { signDetachedCms, type SigningIdentity } from '../../src/modules/signing/cms-sign';
import type { FormFieldLayout, FormFill } from '../../src/modules/signing/pdf/form-fields';
import { updateIncrementally } from '../../src/modules/signing/pdf/incremental-update';
import { prepareForSigning, type SignerLayout } from '../../src/modules/signing/pdf/prepare-for-signing';
import { buildSignatureUpdate, fillSignature, signIncrementally } from '../../src/modules/signing/pdf/sign-incrementally';
import { verifyPdfSignatures } from '../../src/modules/signing/verify/verify-document';
import { makePng } from '../helpers/png';
import { hasPdfsig, hasQpdf, pdfsigReport, qpdfCheck } from '../helpers/pdf-signatures';
import { hasPdftotext, pdfText } from '../helpers/pdf-text';

/** The signing module alone (no session, no database): two signers fill and sign the fields prepared for them. */

const box = (page: number, y: number, width = 200, height = 20) => ({ page, x: 72, y, width, height });

const FIELDS: FormFieldLayout[] = [
  // Signer 1: a text, a checkbox, a radio group and a dropdown.
  { name: 'field_amount', kind: 'text', boxes: [box(0, 60)], fontSize: 11, alignment: 'left', label: 'Amount in words' },
  { name: 'field_consent', kind: 'checkbox', boxes: [box(0, 100, 14, 14)], fontSize: 11, alignment: 'left' },
  {
    name: 'field_repay',
    kind: 'radio',
    boxes: [box(0, 140, 120), box(0, 165, 120)],
    options: ['Monthly', 'Quarterly'],
    fontSize: 10,
    alignment: 'left',
  },
  {
    name: 'field_branch',
    kind: 'choice',
    boxes: [box(0, 200)],
    options: ['Lucknow', 'Chennai'],
    fontSize: 11,
    alignment: 'left',
  },
  // Signer 2: a multiline text, a name in Devanagari, initials on both pages, a seal, and an owner's prefill.
  {
    name: 'field_notes',
    kind: 'text',
    boxes: [box(1, 60, 200, 60)],
    multiline: true,
    fontSize: 10,
    alignment: 'left',
  },
  { name: 'field_name', kind: 'text', boxes: [box(1, 140)], fontSize: 12, alignment: 'center' },
  { name: 'field_initials', kind: 'text', boxes: [box(0, 780, 60), box(1, 780, 60)], fontSize: 10, alignment: 'right' },
  { name: 'field_seal', kind: 'image', boxes: [box(1, 200, 80, 80)], fontSize: 10, alignment: 'center' },
  { name: 'field_loan', kind: 'text', boxes: [box(1, 300)], fontSize: 11, alignment: 'left', value: 'LN-2026-0042' }, // No signer's lock names it: nobody may fill it.
  { name: 'field_spare', kind: 'text', boxes: [box(1, 340)], fontSize: 11, alignment: 'left' },
];

const SIGNERS: SignerLayout[] = [
  {
    fieldName: 'sig_asha',
    signatureBoxes: [{ ...box(0, 700), height: 60 }],
    lockedFields: ['field_amount', 'field_consent', 'field_repay', 'field_branch'],
  },
  {
    fieldName: 'sig_ram',
    signatureBoxes: [{ ...box(1, 700), height: 60 }],
    lockedFields: ['field_notes', 'field_name', 'field_initials', 'field_seal', 'field_loan'],
  },
];

const FILLS_1: FormFill[] = [
  { name: 'field_amount', value: 'Two lakh fifty thousand rupees' },
  { name: 'field_consent', value: 'true' },
  { name: 'field_repay', value: 'Quarterly' },
  { name: 'field_branch', value: 'Chennai' },
];
const FILLS_2: FormFill[] = [
  { name: 'field_notes', value: 'Repayment starts after the moratorium of six months ends on the first working day' },
  { name: 'field_name', value: 'राम कुमार' },
  { name: 'field_initials', value: 'RK' },
  { name: 'field_seal', value: 'asset_seal', image: { bytes: makePng(40, 40), mime: 'image/png' } },
];

function identityFor(commonName: string, root: ReturnType<typeof createRootCa>): SigningIdentity {
  const now = Date.now();
  const notBefore = new Date(Math.floor((now - 3_600_000) / 1000) * 1000);
  const notAfter = new Date(Math.floor((now + 86_400_000) / 1000) * 1000);
  const issued = issueSigningCertificate(root, { commonName, country: 'IN' }, { notBefore, notAfter });
  return { privateKeyPem: issued.privateKeyPem, certificatePem: issued.certificatePem, chainPems: [root.certificatePem] };
}

function sign(pdf: Uint8Array, fieldName: string, signerName: string, identity: SigningIdentity, fills: FormFill[]) {
  return signIncrementally(pdf, {
    fieldName,
    signerName,
    time: new Date(),
    appearanceLines: [`Signed by ${signerName}`],
    fills,
    sign: (ranges) => signDetachedCms(ranges, identity),
  });
}

/** A field of the AcroForm by its /T. */
function fieldNamed(doc: PDFDocument, name: string): { ref: PDFRef; field: PDFDict } {
  const fields = doc.catalog.lookup(PDFName.of('AcroForm'), PDFDict).lookup(PDFName.of('Fields'), PDFArray);
  for (const ref of fields.asArray()) {
    const field = doc.context.lookup(ref, PDFDict);
    if (field.lookupMaybe(PDFName.of('T'), PDFString, PDFHexString)?.decodeText() === name) return { ref: ref as PDFRef, field };
  }
  throw new Error(`no field ${name}`);
}

/** What qpdf says each field holds: its /V, read by an outside tool. */
function qpdfFieldValues(pdf: Uint8Array): Record<string, string | null> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'qpdf-acroform-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    const json = JSON.parse(execFileSync('qpdf', ['--json', '--json-key=acroform', file], { encoding: 'utf8' }));
    const values: Record<string, string | null> = {};
    // qpdf's JSON marks a text string `u:` (its value as Unicode) and gives a name as `/Name`.
    for (const field of json.acroform.fields) values[field.fullname] = field.value?.replace(/^u:/, '') ?? null;
    return values;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('form fields filled in their signer’s own signature update', () => {
  let asha: SigningIdentity;
  let ram: SigningIdentity;
  let prepared: Uint8Array;
  let afterFirst: Uint8Array;
  let finalPdf: Uint8Array;

  beforeAll(async () => {
    const root = createRootCa('Form Test Root', 'Esign Test');
    asha = identityFor('Asha Rao', root);
    ram = identityFor('Ram Kumar', root);
    const blank = await PDFDocument.create();
    blank.addPage([595, 842]);
    blank.addPage([595, 842]);
    prepared = await prepareForSigning(await blank.save(), SIGNERS, [], FIELDS);
    afterFirst = await sign(prepared, 'sig_asha', 'Asha Rao', asha, FILLS_1);
    finalPdf = await sign(afterFirst, 'sig_ram', 'राम कुमार', ram, FILLS_2);
  });

  it('prepares read-only fields of each kind, and locks each signer’s fields with their signature field', async () => {
    const doc = await PDFDocument.load(prepared);
    const flags = (name: string) => (fieldNamed(doc, name).field.get(PDFName.of('Ff')) as any)?.asNumber() ?? 0;
    const type = (name: string) => fieldNamed(doc, name).field.lookup(PDFName.of('FT'))?.toString();
    expect(FIELDS.map((field) => [field.name, type(field.name)])).toEqual([
      ['field_amount', '/Tx'],
      ['field_consent', '/Btn'],
      ['field_repay', '/Btn'],
      ['field_branch', '/Ch'],
      ['field_notes', '/Tx'],
      ['field_name', '/Tx'],
      ['field_initials', '/Tx'],
      ['field_seal', '/Btn'],
      ['field_loan', '/Tx'],
      ['field_spare', '/Tx'],
    ]);
    for (const field of FIELDS) expect(flags(field.name) & 1, field.name).toBe(1);
    expect(flags('field_notes') & (1 << 12)).not.toBe(0);
    expect(flags('field_repay') & ((1 << 15) | (1 << 14))).toBe((1 << 15) | (1 << 14));
    expect(flags('field_branch') & (1 << 17)).not.toBe(0);
    expect(flags('field_seal') & (1 << 16)).not.toBe(0);
    const acroForm = doc.catalog.lookup(PDFName.of('AcroForm'), PDFDict);
    expect(acroForm.get(PDFName.of('NeedAppearances'))).toBeUndefined();
    expect(acroForm.lookup(PDFName.of('DR'), PDFDict).lookup(PDFName.of('Font'), PDFDict).get(PDFName.of('Helv'))).toBeDefined();

    const lock = fieldNamed(doc, 'sig_asha').field.lookup(PDFName.of('Lock'), PDFDict);
    expect(lock.get(PDFName.of('Action'))).toBe(PDFName.of('Include'));
    const locked = lock
      .lookup(PDFName.of('Fields'), PDFArray)
      .asArray()
      .map((name) => (name as PDFString).decodeText());
    expect(locked).toEqual(SIGNERS[0].lockedFields);
    // Only the owner's prefill has a value before anyone signs.
    expect(qpdfFieldValues(prepared)).toMatchObject({ field_amount: null, field_name: null, field_loan: 'LN-2026-0042' });
  });

  it.skipIf(!hasPdfsig || !hasQpdf)(
    'both signatures are valid in pdfsig, the last over the whole file; qpdf finds nothing wrong',
    () => {
      qpdfCheck(Buffer.from(finalPdf));
      const report = pdfsigReport(Buffer.from(finalPdf));
      expect(report.map((entry) => [entry.fieldName, entry.valid, entry.total])).toEqual([
        ['sig_asha', true, false],
        ['sig_ram', true, true],
      ]);
    },
  );

  it.skipIf(!hasQpdf)('qpdf reads every value in its field', () => {
    expect(qpdfFieldValues(finalPdf)).toMatchObject({
      field_amount: 'Two lakh fifty thousand rupees',
      field_consent: '/Yes',
      // A radio group's on-states are the options' indexes (/Opt keeps their labels): Quarterly is /1.
      field_repay: '/1',
      field_branch: 'Chennai',
      field_name: 'राम कुमार',
      field_initials: 'RK',
      field_loan: 'LN-2026-0042',
    });
  });

  it.skipIf(!hasPdftotext)('pdftotext reads what the appearances show: Latin, Devanagari, the dropdown’s choice', () => {
    const text = pdfText(Buffer.from(finalPdf), { layout: false });
    for (const shown of ['Two lakh fifty thousand rupees', 'Chennai', 'Quarterly', 'Monthly', 'LN-2026-0042', 'moratorium']) {
      expect(text).toContain(shown);
    }
    expect(text.match(/\bRK\b/g)?.length).toBe(2);
    expect(text.normalize('NFC')).toContain('राम कुमार');
  });

  it('the signature carries a FieldMDP reference naming the fields its field locks', async () => {
    const doc = await PDFDocument.load(finalPdf);
    const sig = fieldNamed(doc, 'sig_ram').field.lookup(PDFName.of('V'), PDFDict);
    const reference = sig.lookup(PDFName.of('Reference'), PDFArray).lookup(0, PDFDict);
    expect(reference.get(PDFName.of('TransformMethod'))).toBe(PDFName.of('FieldMDP'));
    const params = reference.lookup(PDFName.of('TransformParams'), PDFDict);
    const names = params
      .lookup(PDFName.of('Fields'), PDFArray)
      .asArray()
      .map((name) => (name as PDFString).decodeText());
    expect(names).toEqual(SIGNERS[1].lockedFields);
  });

  it('verify: original, then fields_filled naming the second signer’s fields, every signature intact', async () => {
    const report = await verifyPdfSignatures(finalPdf);
    // Revision 1 is what the first signature covers: the prepared document with the first signer's own fills.
    expect(report.revisions.map((revision) => revision.verdict)).toEqual(['original', 'fields_filled']);
    expect(report.revisions.flatMap((revision) => revision.content_changes)).toEqual([]);
    const changes = report.revisions[1].changes.join('\n');
    for (const name of ['field_notes', 'field_name', 'field_initials', 'field_seal']) expect(changes).toContain(name);
    for (const signature of report.signatures) {
      expect([signature.byte_range_valid, signature.digest_valid, signature.signature_valid], signature.field_name).toEqual([
        true,
        true,
        true,
      ]);
    }
  });

  it('refuses a fill of a field that does not exist, or that an earlier signature locked', async () => {
    await expect(sign(afterFirst, 'sig_ram', 'Ram', ram, [{ name: 'field_nowhere', value: 'x' }])).rejects.toThrow(
      /no form field/,
    );
    await expect(sign(afterFirst, 'sig_ram', 'Ram', ram, [{ name: 'field_amount', value: 'Two crore' }])).rejects.toThrow(
      /locked/,
    );
  });

  it('a value changed after its signature is content_changed, naming the field; pdfsig still finds signature 1 valid', async () => {
    const { updated } = await updateIncrementally(finalPdf, (doc) => {
      fieldNamed(doc, 'field_amount').field.set(PDFName.of('V'), PDFHexString.fromText('Two crore rupees'));
    });
    const report = await verifyPdfSignatures(updated);
    const last = report.revisions.at(-1)!;
    expect(last.verdict).toBe('content_changed');
    expect(last.content_changes.join('\n')).toContain('field_amount');
    if (hasPdfsig) {
      // Each signature is valid over its own byte range: that the file changed after it is what verify says.
      expect(pdfsigReport(Buffer.from(updated)).map((entry) => entry.valid)).toEqual([true, true]);
    }
  });

  it('a fill in an update that adds no signature locking the field is content_changed', async () => {
    // Signer 2's field filled before their signature, in an update of its own.
    const { updated } = await updateIncrementally(afterFirst, (doc) => {
      fieldNamed(doc, 'field_name').field.set(PDFName.of('V'), PDFHexString.fromText('Someone Else'));
    });
    const report = await verifyPdfSignatures(updated);
    const last = report.revisions.at(-1)!;
    expect(last.verdict).toBe('content_changed');
    expect(last.content_changes.join('\n')).toContain('field_name');
  });

  it('a signer cannot widen their own lock while signing to fill a field it did not name', async () => {
    const prepared = await buildSignatureUpdate(
      afterFirst,
      {
        fieldName: 'sig_ram',
        signerName: 'Ram Kumar',
        time: new Date(),
        appearanceLines: ['Signed by Ram Kumar'],
        fills: [...FILLS_2, { name: 'field_spare', value: 'Taken' }],
      },
      async (doc) => {
        // A new /Lock in place of the prepared one (the lock dictionary itself stays as it was).
        const widened = [...SIGNERS[1].lockedFields!, 'field_spare'].map((name) => PDFString.of(name));
        const lock = doc.context.obj({ Type: 'SigFieldLock', Action: 'Include', Fields: widened });
        fieldNamed(doc, 'sig_ram').field.set(PDFName.of('Lock'), lock);
      },
    );
    const cms = await signDetachedCms(
      [prepared.updated.subarray(0, prepared.contentsAt), prepared.updated.subarray(prepared.contentsEnd)],
      ram,
    );
    const report = await verifyPdfSignatures(fillSignature(prepared, cms));
    const last = report.revisions.at(-1)!;
    expect(last.verdict).toBe('content_changed');
    expect(last.content_changes).toEqual([expect.stringContaining('field_spare')]);
  });
});
