import { PDFDict, PDFDocument, PDFHexString, PDFName, PDFString } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateIncrementally } from '../../src/modules/signing/pdf/incremental-update';
import { verifyPdfSignatures } from '../../src/modules/signing/verify/verify-document';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import {
  signAsAadhaar,
  createSession,
  sessionBody,
  signatureAt,
  signerInput,
  uploadAsset,
  uploadPdf,
  type SessionJson,
} from '../helpers/factories';
import { makePng } from '../helpers/fixtures';
import { hasPdfsig, hasQpdf, pdfsigReport, qpdfCheck } from '../helpers/pdf-signatures';
import { hasPdftotext, pdfText } from '../helpers/pdf-text';

const at = (y: number, rest: Record<string, unknown>) => ({
  x: 72,
  y,
  page: 0,
  alignment: 'left',
  width: 220,
  height: 20,
  ...rest,
});

/**
 * Three signers fill their own fields and sign in turn (the second through the sandbox ESP); the document that comes out carries each value in the
 * update of the signature that covers it, every signature stays valid in poppler, and verify names each signer's
 * revision `fields_filled`.
 */
describe.skipIf(!hasPdfsig || !hasQpdf || !hasPdftotext)('fields signers fill, in the signed PDF', () => {
  let app: TestApp;
  let owner: TestUser;
  let session: SessionJson;
  let finalPdf: Buffer;

  const fieldOf = (signer: number, label: string) =>
    (session.signers[signer].elements as { field_id: string; label: string | null; type: string }[]).find(
      (element) => element.label === label || element.type === label,
    )!.field_id;

  async function fill(signer: number, values: Record<string, unknown>) {
    const response = await signerApi(app, 'POST', '/fields', session.signers[signer].token, { values });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  }

  async function sign(signer: number) {
    const response = await signerApi(app, 'POST', '/sign', session.signers[signer].token, { consent: true });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  }

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    // Blank pages: what pdftotext reads is the fields alone, in their order.
    const blank = await PDFDocument.create();
    for (let page = 0; page < 4; page++) blank.addPage([595, 842]);
    const fileId = await uploadPdf(app, owner.token, Buffer.from(await blank.save()));
    const sealAsset = await uploadAsset(app, owner.token, makePng(60, 60));
    session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        signers: [
          signerInput({
            full_name: 'Asha Rao',
            elements: [
              signatureAt(0, 72, 700),
              at(40, { type: 'text', label: 'Amount in words' }),
              at(70, { type: 'checkbox', label: 'Consent', required: true, width: 14, height: 14 }),
              at(100, { type: 'date', label: 'Start', format: 'DD MMM YYYY' }),
            ],
          }),
          signerInput({
            full_name: 'राम कुमार',
            email: 'ram@example.com',
            // Through the sandbox ESP: the hash it signs covers the signer's values.
            sign_type: 'aadhaar',
            elements: [
              signatureAt(1, 72, 700),
              at(140, { type: 'radio', label: 'Repayment', options: ['Monthly', 'Quarterly'], height: 40 }),
              at(190, { type: 'dropdown', label: 'Branch', options: ['Lucknow', 'Chennai'] }),
              at(220, { type: 'name', label: 'Name' }),
              { ...at(760, { type: 'initials', every_page: true }), x: 500, width: 60 },
            ],
          }),
          signerInput({
            full_name: 'Vikram Singh',
            email: 'vikram@example.com',
            elements: [
              signatureAt(2, 72, 700),
              at(260, { type: 'number', label: 'Amount', format: 'indian' }),
              at(290, { type: 'date_signed', label: 'Signed on' }),
              at(320, { type: 'text', label: 'Loan number', read_only: true, value: 'LN-2026-0042' }),
              at(350, { type: 'seal', label: 'Seal', value: sealAsset, width: 60, height: 60 }),
            ],
          }),
        ],
      }),
    );
    await fill(0, {
      [fieldOf(0, 'Amount in words')]: 'Two lakh fifty thousand rupees',
      [fieldOf(0, 'Consent')]: true,
      [fieldOf(0, 'Start')]: '2026-12-01',
    });
    await sign(0);
    await fill(1, {
      [fieldOf(1, 'Repayment')]: 'Quarterly',
      [fieldOf(1, 'Branch')]: 'Chennai',
      [fieldOf(1, 'Name')]: 'राम कुमार',
      [fieldOf(1, 'initials')]: 'RK',
    });
    const aadhaar = await signAsAadhaar(app, session.signers[1].token);
    expect(aadhaar.status, JSON.stringify(aadhaar.body)).toBe(200);
    await fill(2, { [fieldOf(2, 'Amount')]: '250000' });
    await sign(2);
    const link = await rest<{ url: string }>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    finalPdf = Buffer.from(await (await fetch(link.body.data!.url)).arrayBuffer());
  });
  afterAll(async () => app.close());

  it('every signature is valid in pdfsig and qpdf finds nothing wrong', () => {
    qpdfCheck(finalPdf);
    const signatures = pdfsigReport(finalPdf).filter((entry) => entry.kind === 'signature');
    expect(signatures.map((entry) => entry.valid)).toEqual([true, true, true]);
  });

  it('pdftotext reads every value, drawn as its kind draws it', () => {
    const text = pdfText(finalPdf, { layout: false });
    for (const shown of ['Two lakh fifty thousand rupees', '01 Dec 2026', 'Chennai', '2,50,000', 'LN-2026-0042', 'IST']) {
      expect(text).toContain(shown);
    }
    // Initials on each of the four pages, and the name in Devanagari.
    expect(text.match(/\bRK\b/g)?.length).toBeGreaterThanOrEqual(4);
    expect(text.normalize('NFC')).toContain('राम कुमार');
  });

  it('verify names each signer’s revision fields_filled, and every signature intact', async () => {
    const report = await verifyPdfSignatures(finalPdf);
    const verdicts = report.revisions.map((revision) => revision.verdict);
    // Revision 1 is what the first signature covers: the prepared document with the first signer's own update.
    expect(verdicts.slice(0, 3)).toEqual(['original', 'fields_filled', 'fields_filled']);
    expect(report.revisions.flatMap((revision) => revision.content_changes)).toEqual([]);
  });

  it('a value changed after its signer signed is caught by verify, naming the field', async () => {
    const fieldName = fieldOf(0, 'Amount in words');
    const { updated } = await updateIncrementally(finalPdf, (doc) => {
      const fields = doc.catalog.lookup(PDFName.of('AcroForm'), PDFDict).lookup(PDFName.of('Fields'));
      for (const ref of (fields as any).asArray()) {
        const field = doc.context.lookup(ref, PDFDict);
        const title = field.lookupMaybe(PDFName.of('T'), PDFString, PDFHexString)?.decodeText();
        if (title === fieldName) field.set(PDFName.of('V'), PDFString.of('Two crore rupees'));
      }
    });
    const report = await verifyPdfSignatures(Buffer.from(updated));
    const last = report.revisions[report.revisions.length - 1];
    expect(last.verdict).toBe('content_changed');
    expect(last.content_changes.join('\n')).toContain(fieldName);
  });
});
