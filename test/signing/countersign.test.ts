import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, type Envelope } from '../helpers/clients';
import { externalIdentity, signExternally, withObjectStreams, type ExternalIdentity } from '../helpers/external-signer';
import {
  initializeEsign,
  signAsAadhaar,
  sessionBody,
  signatureAt,
  signerInput,
  uploadAsset,
  uploadPdf,
  type SessionJson,
} from '../helpers/factories';
import { corpusFile, corpusPdfs } from '../helpers/fixtures';
import {
  documentTimestampsOf,
  hasPdfsig,
  hasQpdf,
  longTermTailProblems,
  pdfsigReport,
  qpdfCheck,
  signaturesOf,
} from '../helpers/pdf-signatures';
import { uploadTestPfx } from '../helpers/pfx';
import { verifyPdfSignatures } from '../../src/modules/signing/verify/verify-document';

/** As in signing.test.ts: encrypted, or refused at upload. */
const UNSIGNABLE = new Set([
  '005-libreoffice-writer-password/libreoffice-writer-password.pdf',
  '017-unreadable-meta-data/unreadablemetadata.pdf',
]);
const SIGNABLE = corpusPdfs().filter((entry) => !entry.encrypted && !UNSIGNABLE.has(entry.path));

/**
 * Every change the service makes to a document is an incremental update: the uploaded bytes are a prefix of every
 * later revision, so signatures the document already carries (another tool's, a certification, an earlier
 * session's) stay valid. poppler's pdfsig and qpdf judge the results; the earlier signatures come from the tests'
 * own signer (test/helpers/external-signer.ts: its own update, OpenSSL's CMS).
 */
describe('incremental updates: earlier signatures survive', () => {
  let app: TestApp;
  let owner: TestUser;
  let pfxId: string;
  let assetId: string;
  let other: ExternalIdentity;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    pfxId = await uploadTestPfx(app, owner.token, { commonName: 'Acme Legal Seal' });
    assetId = await uploadAsset(app, owner.token);
    other = externalIdentity('Other Tool Signer');
    if (!hasPdfsig) console.warn('pdfsig (poppler-utils) is not installed: signatures are verified in-process only');
  });
  afterAll(async () => {
    other?.dispose();
    await app.close();
  });

  async function signerCall<T = any>(method: 'GET' | 'POST', path: string, token: string, json?: unknown) {
    const response = await fetch(new URL(`/signer-api${path}`, app.url), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) },
      body: json ? JSON.stringify(json) : undefined,
    });
    return { status: response.status, body: (await response.json()) as Envelope<T> };
  }

  async function currentDocument(signerToken: string): Promise<Buffer> {
    const response = await fetch(new URL('/signer-api/document', app.url), {
      headers: { authorization: `Bearer ${signerToken}` },
    });
    expect(response.status).toBe(200);
    return Buffer.from(await response.arrayBuffer());
  }

  async function finalDocument(clientId: string): Promise<Buffer> {
    const link = await rest<any>(app, 'GET', '/esign/download-pdf', { token: owner.token, query: { client_id: clientId } });
    expect(link.status).toBe(200);
    return Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
  }

  /** Uploads a PDF and checks that the service stored it byte for byte. */
  async function upload(pdf: Buffer): Promise<string> {
    const fileId = await uploadPdf(app, owner.token, pdf, 'signed-elsewhere.pdf');
    const [row] = (await app.services.orm.em
      .fork()
      .getConnection()
      .execute('select storage_key from files where id = ?', [fileId])) as { storage_key: string }[];
    expect((await app.services.blobs.getBytes(row.storage_key)).equals(pdf)).toBe(true);
    return fileId;
  }

  async function stockStamps(quantity: number): Promise<string> {
    const order = await rest<any>(app, 'POST', '/stamps/create-order', {
      token: owner.token,
      json: {
        state_code: 'MH',
        article_id: 'MH-5',
        first_party_name: 'A',
        second_party_name: 'B',
        stamp_duty_amount: 100,
        consideration_amount: 1,
        quantity,
        mock: true,
      },
    });
    expect(order.status, JSON.stringify(order.body)).toBe(200);
    for (let i = 0; i < 300; i++) {
      const status = await availableStamps(order.body.data.client_id);
      if (status === quantity) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await availableStamps(order.body.data.client_id)).toBe(quantity);
    return order.body.data.client_id;
  }

  async function availableStamps(orderId: string): Promise<number> {
    const status = await rest<any>(app, 'GET', '/stamps/order-status', { token: owner.token, query: { client_id: orderId } });
    return status.body.data.status_counts.available ?? 0;
  }

  type SignType = 'aadhaar' | 'suresign' | 'pfx';
  interface Layout {
    stamp?: boolean;
    /** An `image` element (drawn into the page) for the first signer. */
    image?: boolean;
    /** A wet-signature image in the first signer's signature appearance. */
    wet?: boolean;
    /** The signers' sign types, in order (default: aadhaar, suresign, pfx). */
    signTypes?: SignType[];
  }

  /** The first signer signs on the first page (with the wet image and the image element), the others on the last. */
  function sessionRequest(fileId: string, pages: number, layout: Layout): Record<string, unknown> {
    const last = pages - 1;
    const signers = (layout.signTypes ?? ['aadhaar', 'suresign', 'pfx']).map((signType, index) => {
      const identity =
        signType === 'aadhaar'
          ? { full_name: 'Meera Iyer', sign_type: 'aadhaar' }
          : signType === 'pfx'
            ? { full_name: 'Seal', sign_type: 'pfx', pfx_id: pfxId }
            : { full_name: 'Second Signer', sign_type: 'suresign' };
      if (index > 0) return signerInput({ ...identity, elements: [signatureAt(last, 40 + 200 * (index - 1), 120)] });
      const signature = { ...signatureAt(0, 40, 40), width: 220, height: 60, ...(layout.wet ? { value: assetId } : {}) };
      const image = { x: 300, y: 300, page: last, type: 'image', alignment: 'left', value: assetId };
      return signerInput({ ...identity, elements: [signature, ...(layout.image ? [image] : [])] });
    });
    return sessionBody(fileId, {
      signers,
      ...(layout.stamp ? { stamp: { amount: '100', state_code: 'MH', article_id: 'MH-5', mock: true } } : {}),
    });
  }

  /**
   * Signs every signer in turn and answers every revision the session went through: the document before each
   * signature (after preparation) and the final one.
   */
  async function signAll(session: SessionJson, signTypes: SignType[]): Promise<Buffer[]> {
    const revisions: Buffer[] = [];
    for (const [index, signer] of session.signers.entries()) {
      revisions.push(await currentDocument(signer.token));
      const signed =
        signTypes[index] === 'aadhaar'
          ? await signAsAadhaar(app, signer.token, '9876 9876 9870')
          : await signerCall('POST', '/sign', signer.token, { consent: true });
      expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    }
    revisions.push(await finalDocument(session.client_id));
    return revisions;
  }

  /** Each revision starts with the bytes of the one before it, the uploaded document first. */
  function expectPrefixes(uploaded: Buffer, revisions: Buffer[]): void {
    let previous = uploaded;
    for (const [index, revision] of revisions.entries()) {
      expect(revision.length, `revision ${index}`).toBeGreaterThanOrEqual(previous.length);
      expect(revision.subarray(0, previous.length).equals(previous), `revision ${index} keeps the bytes before it`).toBe(true);
      previous = revision;
    }
  }

  /**
   * Every signature valid (in-process, pdfsig), every document time-stamp valid (in-process: pdfsig cannot check
   * one), the last signature over everything but the long-term updates (a /DSS and a document time-stamp over the
   * whole file); qpdf finds nothing; pdf-lib reads it.
   */
  async function expectAllValid(pdf: Buffer, signatures: number, timestamps: number): Promise<void> {
    const embedded = await signaturesOf(pdf);
    expect(embedded).toHaveLength(signatures);
    for (const signature of embedded) {
      expect(
        signature.verification.digestValid && signature.verification.signatureValid,
        signature.verification.problems.join('; '),
      ).toBe(true);
    }
    const stamps = await documentTimestampsOf(pdf);
    expect(stamps).toHaveLength(timestamps);
    for (const stamp of stamps) expect(stamp.verification.valid, stamp.verification.problems.join('; ')).toBe(true);
    expect(await longTermTailProblems(pdf)).toEqual([]);
    if (hasPdfsig) {
      const report = pdfsigReport(pdf);
      expect(report).toHaveLength(signatures + timestamps);
      const signed = report.filter((entry) => entry.kind === 'signature');
      expect(signed).toHaveLength(signatures);
      expect(signed.map((entry) => entry.valid)).toEqual(signed.map(() => true));
      expect(report.at(-1)).toMatchObject({ kind: 'document-timestamp', total: true });
    }
    if (hasQpdf) qpdfCheck(pdf);
    await PDFDocument.load(pdf);
  }

  async function countersign(uploaded: Buffer, layout: Layout, earlier: number): Promise<Buffer> {
    const fileId = await upload(uploaded);
    const pages = (await PDFDocument.load(uploaded)).getPageCount();
    const response = await initializeEsign(app, owner.token, sessionRequest(fileId, pages, layout));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const signTypes: SignType[] = layout.signTypes ?? ['aadhaar', 'suresign', 'pfx'];
    const revisions = await signAll(response.body.data!, signTypes);
    expectPrefixes(uploaded, revisions);
    const final = revisions.at(-1)!;
    // A completed session's document (uploaded again) already ends with a document time-stamp; this one adds its own.
    await expectAllValid(final, earlier + signTypes.length, (await documentTimestampsOf(uploaded)).length + 1);
    expect((await PDFDocument.load(final)).getPageCount()).toBe(pages + (layout.stamp ? 1 : 0));
    await expectRevisionVerdicts(final, uploaded, layout, earlier > 0);
    return final;
  }

  /**
   * The verify report judges each revision after the first signature. On a document signed before, the service's
   * first updates follow the earlier signatures: prefixing a stamp page (an update of its own) and drawing an image
   * element (in the preparing update) change content, since what the earlier signers signed is no longer what a
   * reader sees; signature fields, wet images in signature appearances, the signatures and the long-term updates
   * are what signing may add.
   */
  async function expectRevisionVerdicts(final: Buffer, uploaded: Buffer, layout: Layout, signedBefore: boolean): Promise<void> {
    const report = await verifyPdfSignatures(final);
    expect(report.revisions[0].verdict).toBe('original');
    // The revisions this session appended (those of an upload signed before were judged when it was made).
    const appended = report.revisions.slice(1).filter((revision) => revision.end_bytes > uploaded.length);
    const changing = signedBefore
      ? [
          ...(layout.stamp ? [/\(Pages\) changed \(.*\/Kids/] : []),
          ...(layout.image ? [/page \d+ 0 R \(page \d+\) changed \(.*\/Contents/] : []),
        ]
      : [];
    expect(
      appended.map((revision) => revision.verdict),
      JSON.stringify(appended.map((revision) => revision.content_changes)),
    ).toEqual(appended.map((_, index) => (index < changing.length ? 'content_changed' : 'signing_only')));
    for (const [index, change] of changing.entries()) expect(appended[index].content_changes.join('\n')).toMatch(change);
    // Every signature verifies (checked above): the verdicts alone decide all_valid.
    const clean = report.revisions.every((revision) => revision.verdict !== 'content_changed');
    expect(report.all_valid, JSON.stringify(report.signatures.map((s) => s.problems))).toBe(clean);
    if (changing.length > 0) expect(clean).toBe(false);
  }

  describe('every unprotected PDF of the corpus', () => {
    for (const entry of SIGNABLE) {
      it(`${entry.path}: prepared (image element, wet image) and signed as updates of the upload`, async () => {
        await countersign(corpusFile(entry.path), { image: true, wet: true, signTypes: ['suresign'] }, 0);
      });
    }
    for (const entry of SIGNABLE) {
      it(`${entry.path}, signed by another tool first: countersigned by aadhaar, suresign and pfx`, async () => {
        await countersign(await signExternally(corpusFile(entry.path), other), { image: true, wet: true }, 1);
      });
    }
  });

  describe('documents earlier versions of the service wrote, and damaged ones', () => {
    it('a document saved by pdf-lib without object streams (as earlier versions prepared documents), signed elsewhere', async () => {
      const doc = await PDFDocument.load(corpusFile('004-pdflatex-4-pages/pdflatex-4-pages.pdf'), { updateMetadata: false });
      const rewritten = Buffer.from(await doc.save({ useObjectStreams: false }));
      await countersign(await signExternally(rewritten, other), { image: true, wet: true }, 1);
    });

    it('a damaged file whose startxref points nowhere: its first update carries a complete cross-reference section', async () => {
      const original = corpusFile('002-trivial-libre-office-writer/002-trivial-libre-office-writer.pdf');
      const damaged = Buffer.from(original.toString('latin1').replace(/startxref\s+12125/, 'startxref\n12000'), 'latin1');
      expect(damaged.length).toBe(original.length);
      const final = await countersign(damaged, { image: true, wet: true }, 0);
      // The update after the damaged bytes starts a fresh chain (no /Prev); later ones chain to it.
      const firstUpdate = final.subarray(damaged.length, final.indexOf('%%EOF', damaged.length, 'latin1')).toString('latin1');
      expect(firstUpdate).toContain('xref\n0 1\n0000000000 65535 f');
      expect(firstUpdate).not.toContain('/Prev');
    });
  });

  describe('a PDF signed by another tool', () => {
    let stampOrder: string;
    beforeAll(async () => {
      stampOrder = await stockStamps(4);
    });

    const bases: [string, () => Promise<Buffer>][] = [
      ['classic xref (LibreOffice)', () => signExternally(corpusFile('012-libreoffice-form/libreoffice-form.pdf'), other)],
      [
        'object streams, signed with an xref table after the xref stream',
        () =>
          signExternally(withObjectStreams(corpusFile('004-pdflatex-4-pages/pdflatex-4-pages.pdf')), other, { xref: 'table' }),
      ],
      [
        'object streams, signed with an xref stream',
        () =>
          signExternally(
            withObjectStreams(corpusFile('002-trivial-libre-office-writer/002-trivial-libre-office-writer.pdf')),
            other,
            {
              xref: 'stream',
            },
          ),
      ],
    ];
    for (const [name, base] of bases) {
      it(`${name}: countersigned with signature fields only`, async () => {
        await countersign(await base(), {}, 1);
      });
      it(`${name}: countersigned with a stamp page, an image element and a wet image`, async () => {
        await countersign(await base(), { stamp: true, image: true, wet: true }, 1);
      });
    }

    it('twice (two other signatures), then a completed session uploaded again and signed once more', async () => {
      const twice = await signExternally(await signExternally(corpusFile('021-pdfa/crazyones-pdfa.pdf'), other), other, {
        fieldName: 'SecondExternal',
      });
      const completed = await countersign(twice, { stamp: true, wet: true }, 2);
      await countersign(completed, { image: true, signTypes: ['pfx'] }, 5);
      expect(await availableStamps(stampOrder)).toBe(0);
    });
  });

  describe('certified documents (DocMDP)', () => {
    let stampOrder: string;
    beforeAll(async () => {
      stampOrder = await stockStamps(1);
    });

    const certified = (permissions: 1 | 2 | 3 | 'no-P', base = corpusFile('004-pdflatex-4-pages/pdflatex-4-pages.pdf')) =>
      signExternally(base, other, { certify: permissions, fieldName: 'Certification' });

    async function refused(body: Record<string, unknown>, field: string, permissions: number) {
      const sessionsBefore = await countSessions();
      const response = await initializeEsign(app, owner.token, body);
      expect(response.status, JSON.stringify(response.body)).toBe(422);
      expect(response.body).toMatchObject({ status_code: 422, message: 'document_certified', success: false, data: null });
      expect((response.body as any).errors).toEqual([{ field, problem: expect.stringContaining(`P=${permissions}`) }]);
      expect(await countSessions()).toBe(sessionsBefore);
    }
    const countSessions = async () =>
      Number(
        (
          (await app.services.orm.em.fork().getConnection().execute('select count(*)::int as n from esign_sessions')) as {
            n: number;
          }[]
        )[0].n,
      );

    it('P=1 (no changes): refused, with or without stamps and images', async () => {
      const fileId = await upload(await certified(1));
      await refused(sessionRequest(fileId, 4, { signTypes: ['suresign'] }), 'file_id', 1);
      await refused(sessionRequest(fileId, 4, { stamp: true, image: true }), 'file_id', 1);
      expect(await availableStamps(stampOrder)).toBe(1);
    });

    it('P=2 (form filling and signing existing fields): refused, since a session adds signature fields', async () => {
      const fileId = await upload(await certified(2, withObjectStreams(corpusFile('004-pdflatex-4-pages/pdflatex-4-pages.pdf'))));
      await refused(sessionRequest(fileId, 4, { signTypes: ['suresign'] }), 'file_id', 2);
    });

    it('P=2 also when the certification names no permissions (/P missing means 2), and from a template', async () => {
      const fileId = await upload(await certified('no-P'));
      await refused(sessionRequest(fileId, 4, { signTypes: ['suresign'] }), 'file_id', 2);

      const template = await rest<any>(app, 'POST', '/templates/save', {
        token: owner.token,
        json: { name: 'Certified', file_id: fileId, signers: [{ reason: 'Party', elements: [signatureAt(0)] }] },
      });
      expect(template.status, JSON.stringify(template.body)).toBe(200);
      const fromTemplate = await rest<any>(app, 'POST', '/esign/initialize-from-template', {
        token: owner.token,
        json: {
          template_id: template.body.data.client_id,
          sign_type: 'suresign',
          signers: [{ full_name: 'Asha Rao', email: 'asha@example.com' }],
        },
      });
      expect(fromTemplate.status, JSON.stringify(fromTemplate.body)).toBe(422);
      expect(fromTemplate.body.message).toBe('document_certified');
    });

    it('P=3 (annotations and form fields too): stamp pages, image elements and an appended certificate refused', async () => {
      const fileId = await upload(await certified(3));
      await refused(sessionRequest(fileId, 4, { stamp: true, signTypes: ['suresign'] }), 'stamp', 3);
      await refused(sessionRequest(fileId, 4, { image: true }), 'signers[0].elements[1]', 3);
      // A certificate of completion appended after the signatures adds pages too.
      await refused(
        { ...sessionRequest(fileId, 4, { signTypes: ['suresign'] }), append_certificate: true },
        'append_certificate',
        3,
      );
      expect(await availableStamps(stampOrder)).toBe(1);
    });

    it('P=3: signature fields and wet images allowed; signed by aadhaar, suresign and pfx, the certification still valid', async () => {
      const final = await countersign(await certified(3), { wet: true }, 1);
      const [certification] = await signaturesOf(final);
      expect(certification.verification.signerSubject).toContain('CN=Other Tool Signer');
      expect(final.toString('latin1')).toContain('/TransformMethod /DocMDP');
    });

    it('P=3 on a document with object streams: signed, every signature valid', async () => {
      await countersign(
        await certified(3, withObjectStreams(corpusFile('010-pdflatex-forms/pdflatex-forms.pdf'))),
        { wet: true },
        1,
      );
    });
  });
});
