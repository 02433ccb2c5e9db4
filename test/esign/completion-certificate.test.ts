import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDict, PDFDocument, PDFHexString, PDFName, PDFRawStream, PDFString, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxRootCa } from '../../src/modules/sandbox/sandbox-ca';
import { updateIncrementally } from '../../src/modules/signing/pdf/incremental-update';
import { verifyPdfSignatures } from '../../src/modules/signing/verify/verify-document';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { EsignCompletionCertificateDocument } from '../__generated__/graphql';
import { gql, rest, signerApi } from '../helpers/clients';
import { createSession, FOUR_PAGE_PDF, sessionBody, signatureAt, signerInput, uploadPdf } from '../helpers/factories';
import { hasPdfsig, hasQpdf, pdfsigReport, qpdfCheck } from '../helpers/pdf-signatures';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** What a reader sees on the pages, as poppler's pdftotext extracts it. */
function pdfText(pdf: Buffer): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pdftotext-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The fonts a PDF uses, as poppler's pdffonts lists them. */
function fontsOf(pdf: Buffer): { name: string; embedded: boolean }[] {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pdffonts-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    const lines = execFileSync('pdffonts', [file], { encoding: 'utf8' }).split('\n').slice(2).filter(Boolean);
    // name, type (one or two words), encoding, emb, sub, uni, object id (two numbers): read from the right.
    return lines.map((line) => {
      const columns = line.trim().split(/\s+/);
      return { name: columns[0], embedded: columns.at(-5) === 'yes' };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('certificate of completion', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let rootPem: string;

  beforeAll(async () => {
    app = await startTestApp({ env: { PADES_LTV: 'true' } });
    owner = await app.createUser();
    other = await app.createUser();
    rootPem = (await sandboxRootCa(app.services, app.services.orm.em.fork())).certificatePem;
  });
  afterAll(async () => app.close());

  async function download(route: string, clientId: string): Promise<Buffer> {
    const link = await rest<any>(app, 'GET', route, { token: owner.token, query: { client_id: clientId } });
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    return Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
  }

  /** Two signers (suresign) both sign; answers the session id. */
  async function completedSession(
    options: Record<string, unknown>,
    names = { document: 'Lease deed.pdf', first: 'Asha Rao', second: 'Vikram Singh' },
  ): Promise<{ clientId: string; fileId: string }> {
    const fileId = await uploadPdf(app, owner.token, FOUR_PAGE_PDF, names.document);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        signers: [
          signerInput({ full_name: names.first, email: 'asha@example.com', elements: [signatureAt(0, 72, 640)] }),
          signerInput({ full_name: names.second, email: 'vikram@example.com', elements: [signatureAt(1, 72, 500)] }),
        ],
        ...options,
      }),
    );
    for (const signer of session.signers) {
      const signed = await signerApi(app, 'POST', '/sign', signer.token, { consent: true });
      expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    }
    return { clientId: session.client_id, fileId };
  }

  describe('as a file of its own (the default)', () => {
    let clientId: string;
    let fileId: string;
    let certificate: Buffer;
    let signedPdf: Buffer;

    beforeAll(async () => {
      ({ clientId, fileId } = await completedSession({}));
      certificate = await download('/esign/download-certificate', clientId);
      signedPdf = await download('/esign/download-pdf', clientId);
    });

    it('states the session, the document, both fingerprints, every signer and the audit trail', async () => {
      const text = pdfText(certificate);
      expect(text).toContain('Certificate of completion');
      expect(text).toContain(clientId);
      expect(text).toContain('Lease deed.pdf');
      const original = await app.services.orm.em
        .fork()
        .getConnection()
        .execute('select sha256 from files where id = ?', [fileId]);
      expect(text).toContain(original[0].sha256);
      // The signed PDF it names is exactly what download-pdf serves.
      expect(text).toContain(sha256(signedPdf));
      expect(text).toContain(`${signedPdf.length} bytes`);
      for (const name of ['Asha Rao', 'Vikram Singh', 'asha@example.com', 'vikram@example.com']) expect(text).toContain(name);
      expect(text).toMatch(/Certificate\s+CN=Esign Sandbox Document Signer/);
      expect(text).toMatch(/Signature\s+valid, PAdES B-LTA, chain trusted/);
      expect(text).toContain('127.0.0.1');
      for (const event of ['session_created', 'signed (Asha Rao, 127.0.0.1)', 'signed (Vikram Singh, 127.0.0.1)'])
        expect(text).toContain(event);
      expect(text).toContain('sign_type: suresign');
    });

    it('in English embeds no font: Helvetica, which every reader has', () => {
      const fonts = fontsOf(certificate);
      expect(new Set(fonts.map((font) => font.name))).toEqual(new Set(['Helvetica', 'Helvetica-Bold']));
      expect(fonts.some((font) => font.embedded)).toBe(false);
    });

    it('is signed by the platform: pdfsig, qpdf and the verification report agree, and a changed byte shows', async () => {
      if (hasQpdf) qpdfCheck(certificate);
      if (hasPdfsig) {
        const entries = pdfsigReport(certificate);
        expect(entries.filter((entry) => entry.kind === 'signature')).toHaveLength(1);
        expect(entries.every((entry) => entry.kind !== 'signature' || entry.valid)).toBe(true);
      }
      const report = await verifyPdfSignatures(certificate, { trustedRootsPem: [rootPem] });
      expect(report.all_valid, JSON.stringify(report.signatures.map((s) => s.problems))).toBe(true);
      expect(report.signatures[0]).toMatchObject({
        signer_subject: expect.stringContaining('CN=Esign Sandbox Document Signer'),
        certificate_chain_valid: true,
        pades_level: 'B-LTA',
      });

      // One byte of the first page's content changed: the platform's signature no longer holds.
      const tampered = Buffer.from(certificate);
      tampered[certificate.indexOf('stream', 0, 'latin1') + 20] ^= 0x01;
      const after = await verifyPdfSignatures(tampered, { trustedRootsPem: [rootPem] });
      expect(after.all_valid).toBe(false);
      if (hasPdfsig) expect(pdfsigReport(tampered).some((entry) => entry.kind === 'signature' && !entry.valid)).toBe(true);
    });

    it('leaves the signed PDF as before: the signers and the document time-stamp only, nothing appended', async () => {
      const report = (await rest<any>(app, 'GET', '/esign/verify', { token: owner.token, query: { client_id: clientId } })).body
        .data;
      expect(report.all_valid).toBe(true);
      expect(report.signatures).toHaveLength(3);
      expect(report.revisions.map((revision: any) => revision.verdict)).not.toContain('pages_appended');
      expect((await PDFDocument.load(signedPdf)).getPageCount()).toBe(4);
    });

    it('is on GraphQL too, and the details say the session did not ask to append it', async () => {
      const answer = await gql(app, owner.token, EsignCompletionCertificateDocument, { client_id: clientId });
      expect(answer.errors).toBeUndefined();
      expect(answer.data!.esignSession.append_certificate).toBe(false);
      const bytes = Buffer.from(await (await fetch(answer.data!.esignCompletionCertificateUrl.url)).arrayBuffer());
      expect(bytes.equals(certificate)).toBe(true);
    });

    it('is refused before completion and to another user, as the signed PDF is', async () => {
      const fileId2 = await uploadPdf(app, owner.token);
      const pending = await createSession(app, owner.token, sessionBody(fileId2));
      for (const [token, id] of [
        [owner.token, pending.client_id],
        [other.token, clientId],
      ] as const) {
        const answer = await rest<any>(app, 'GET', '/esign/download-certificate', { token, query: { client_id: id } });
        expect(answer.status).toBe(404);
        expect(answer.body).toMatchObject({ success: false, message: 'Esign not completed.', data: null });
      }
    });
  });

  describe('appended to the signed PDF (append_certificate: true)', () => {
    let clientId: string;
    let signedPdf: Buffer;
    let certificate: Buffer;
    let report: any;

    beforeAll(async () => {
      ({ clientId } = await completedSession({ append_certificate: true }));
      signedPdf = await download('/esign/download-pdf', clientId);
      certificate = await download('/esign/download-certificate', clientId);
      report = (await rest<any>(app, 'GET', '/esign/verify', { token: owner.token, query: { client_id: clientId } })).body.data;
    });

    it('adds the certificate pages after the last page, every signature valid (ours, pdfsig, qpdf)', async () => {
      const pages = (await PDFDocument.load(signedPdf)).getPageCount();
      const certificatePages = (await PDFDocument.load(certificate)).getPageCount();
      expect(pages).toBe(4 + certificatePages);
      expect(report.all_valid, JSON.stringify(report.signatures.map((s: any) => s.problems))).toBe(true);
      // Two signers, the platform's signature over the appended pages, the document time-stamp.
      expect(report.signatures.map((s: any) => s.pades_level)).toEqual(['B-LTA', 'B-LTA', 'B-LTA', null]);
      expect(report.signatures[2].signer_subject).toContain('CN=Esign Sandbox Document Signer');
      const appended = report.revisions.find((revision: any) => revision.verdict === 'pages_appended');
      expect(appended.signatures).toEqual([report.signatures[2].field_name]);
      expect(appended.content_changes).toEqual([]);
      expect(appended.changes.join('\n')).toMatch(/page \d+ 0 R \(page 5\) appended/);
      expect(report.revisions.filter((revision: any) => revision.verdict === 'content_changed')).toEqual([]);
      if (hasQpdf) qpdfCheck(signedPdf);
      if (hasPdfsig) {
        const entries = pdfsigReport(signedPdf);
        expect(entries.map((entry) => entry.kind)).toEqual(['signature', 'signature', 'signature', 'document-timestamp']);
        expect(entries.filter((entry) => entry.kind === 'signature').every((entry) => entry.valid)).toBe(true);
      }
    });

    it('the appended pages read as the certificate, and the fingerprint it states is of the bytes before them', async () => {
      const text = pdfText(signedPdf).replace(/\s+/g, ' ');
      expect(text).toContain('Certificate of completion');
      expect(text).toContain('This certificate is appended to the signed document');
      const stated = /its first (\d+) bytes \(before this certificate was appended\)/.exec(text);
      expect(stated).not.toBeNull();
      const bytes = Number(stated![1]);
      expect(text).toContain(sha256(signedPdf.subarray(0, bytes)));
      // Those bytes are what the last signer's signature covers.
      expect(report.signatures[1].revision_bytes).toBe(bytes);
      // The file of its own states the same.
      expect(pdfText(certificate)).toContain(sha256(signedPdf.subarray(0, bytes)));
    });
  });

  it('writes names in Indian scripts in their own fonts, shaped, in the certificate and the signatures, all valid', async () => {
    const names = { document: 'पट्टा समझौता.pdf', first: 'आशा राव', second: 'முருகன் ஆறுமுகம்' };
    const { clientId } = await completedSession({}, names);
    const certificate = await download('/esign/download-certificate', clientId);
    const text = pdfText(certificate);
    // pdftotext reads the names back from the fonts' ToUnicode maps (not `?`, as Helvetica alone printed them).
    for (const name of [names.first, names.second, `signed (${names.first}, 127.0.0.1)`]) expect(text).toContain(name);
    expect(text).toContain('पट्टा समझौता.pdf');
    expect(text).not.toMatch(/\?\?\?/);
    // Noto Sans Devanagari and Tamil (pdf-lib names a subset NAME-<n>): the document name in the regular weight, the
    // signer headings and the audit trail in bold.
    const embedded = fontsOf(certificate)
      .filter((font) => font.embedded)
      .map((font) => font.name.replace(/-\d+$/, ''))
      .sort();
    expect(embedded).toEqual(['NotoSansDevanagari-Bold', 'NotoSansDevanagari-Regular', 'NotoSansTamil-Bold']);
    if (hasQpdf) qpdfCheck(certificate);
    if (hasPdfsig) expect(pdfsigReport(certificate).every((entry) => entry.kind !== 'signature' || entry.valid)).toBe(true);
    const report = await verifyPdfSignatures(certificate, { trustedRootsPem: [rootPem] });
    expect(report.all_valid).toBe(true);

    // The signed document: each signer's appearance ("Digitally signed by ...") draws the name in its script's font,
    // the signature dictionary names them in UTF-16, and every signature holds (ours, pdfsig, qpdf).
    const signed = await download('/esign/download-pdf', clientId);
    const drawn = fontsOf(signed).map((font) => font.name.replace(/-\d+$/, ''));
    expect(drawn).toEqual(expect.arrayContaining(['NotoSansDevanagari-Regular', 'NotoSansTamil-Regular', 'Helvetica']));
    const doc = await PDFDocument.load(signed);
    const sigNames = doc.context
      .enumerateIndirectObjects()
      .map(([, object]) => object)
      .filter((object): object is PDFDict => object instanceof PDFDict && object.get(PDFName.of('Type')) === PDFName.of('Sig'))
      .map((sig) => sig.lookup(PDFName.of('Name'), PDFString, PDFHexString).decodeText());
    expect(sigNames).toEqual(expect.arrayContaining([names.first, names.second]));
    if (hasQpdf) qpdfCheck(signed);
    if (hasPdfsig) expect(pdfsigReport(signed).every((entry) => entry.kind !== 'signature' || entry.valid)).toBe(true);
    const signedReport = await verifyPdfSignatures(signed, { trustedRootsPem: [rootPem] });
    expect(signedReport.all_valid, JSON.stringify(signedReport.revisions.map((r) => r.verdict))).toBe(true);
  });

  it('gives a signer who reads Hindi or Tamil their part in their language, under the English rows, still signed', async () => {
    const fileId = await uploadPdf(app, owner.token, FOUR_PAGE_PDF, 'Lease deed.pdf');
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        signers: [
          signerInput({ full_name: 'Asha Rao', email: 'asha@example.com', language: 'hi', elements: [signatureAt(0, 72, 640)] }),
          signerInput({
            full_name: 'Murugan',
            email: 'murugan@example.com',
            language: 'ta',
            elements: [signatureAt(1, 72, 500)],
          }),
          signerInput({ full_name: 'Vikram Singh', email: 'vikram@example.com', elements: [signatureAt(2, 72, 500)] }),
        ],
      }),
    );
    for (const signer of session.signers) {
      const signed = await signerApi(app, 'POST', '/sign', signer.token, { consent: true });
      expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    }
    const certificate = await download('/esign/download-certificate', session.client_id);
    // pdftotext reads shaped text in the glyphs' visual order (a Devanagari vowel sign before its consonant), so the
    // rows are found by their data: each signer's email shows twice, under its English label and its translated one.
    const lines = pdfText(certificate).split('\n');
    const script = (name: string) => new RegExp(`\\p{Script=${name}}`, 'u');
    for (const [name, email, language] of [
      ['Asha Rao', 'asha@example.com', 'Devanagari'],
      ['Murugan', 'murugan@example.com', 'Tamil'],
    ] as const) {
      const rows = lines.filter((line) => line.includes(email)).map((line) => line.split(email)[0]!.trim());
      expect(rows[0], name).toBe('Email');
      expect(rows[1], name).toMatch(script(language));
      expect(rows, name).toHaveLength(2);
      expect(
        lines.find((line) => line.trim().startsWith(`${name}:`)),
        name,
      ).toMatch(script(language));
    }
    // An English signer has the English rows alone.
    expect(lines.filter((line) => line.includes('vikram@example.com'))).toHaveLength(1);
    const embedded = fontsOf(certificate)
      .filter((font) => font.embedded)
      .map((font) => font.name.replace(/-\d+$/, ''));
    expect(embedded).toEqual(
      expect.arrayContaining(['NotoSansDevanagari-Regular', 'NotoSansTamil-Regular', 'NotoSansTamil-Bold']),
    );
    if (hasQpdf) qpdfCheck(certificate);
    if (hasPdfsig) expect(pdfsigReport(certificate).every((entry) => entry.kind !== 'signature' || entry.valid)).toBe(true);
    expect((await verifyPdfSignatures(certificate, { trustedRootsPem: [rootPem] })).all_valid).toBe(true);
  });

  it('a name Helvetica can show once its typography is plain keeps its letters in the appearance (D’Souza, not D?Souza)', async () => {
    const { clientId } = await completedSession({}, { document: 'Lease deed.pdf', first: 'Ana D’Souza', second: 'Vikram Singh' });
    const signed = await PDFDocument.load(await download('/esign/download-pdf', clientId));
    const appearances = signed.context
      .enumerateIndirectObjects()
      .map(([, object]) => object)
      .filter(
        (object): object is PDFRawStream =>
          object instanceof PDFRawStream && object.dict.get(PDFName.of('Subtype')) === PDFName.of('Form'),
      )
      .map((stream) => Buffer.from(stream.contents).toString('latin1'));
    expect(appearances.some((text) => text.includes("(Digitally signed by Ana D'Souza) Tj"))).toBe(true);
    expect(appearances.some((text) => text.includes('D?Souza'))).toBe(false);
  });

  it('pages appended with no signature of their own are a content change', async () => {
    const { clientId } = await completedSession({});
    const signed = await download('/esign/download-pdf', clientId);
    const { updated } = await updateIncrementally(signed, async (doc) => {
      const page = doc.addPage();
      page.drawText('Added later', { font: await doc.embedFont(StandardFonts.Helvetica), x: 72, y: 700 });
    });
    const report = await verifyPdfSignatures(updated, { trustedRootsPem: [rootPem] });
    expect(report.all_valid).toBe(false);
    const last = report.revisions.at(-1)!;
    expect(last.verdict).toBe('content_changed');
    expect(last.content_changes.join('\n')).toMatch(/\(page 5\) appended \(no signature of the same update covers it\)/);
  });
});
