import { PDFDict, PDFDocument, PDFName, PDFRawStream } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, type Envelope } from '../helpers/clients';
import { createSession, sessionBody, signAsAadhaar, signatureAt, signerInput, uploadAsset, uploadPdf } from '../helpers/factories';
import { corpusPdfs, corpusFile } from '../helpers/fixtures';
import { hasPdfsig, hasQpdf, longTermTailProblems, pdfsigReport, qpdfCheck, signaturesOf } from '../helpers/pdf-signatures';
import { uploadTestPfx } from '../helpers/pfx';
import { createRootCa } from '../../src/modules/signing/certificates';

const UNSIGNABLE = new Set([
  '005-libreoffice-writer-password/libreoffice-writer-password.pdf',
  '017-unreadable-meta-data/unreadablemetadata.pdf',
]);

describe('signing sessions (aadhaar, suresign and pfx)', () => {
  let app: TestApp;
  let owner: TestUser;
  let pfxId: string;

  beforeAll(async () => {
    // The owner's PFX comes from a CA the deployment trusts (TRUST_ANCHORS), as a licensed CA's DSC would.
    const dscCa = createRootCa('Test Licensed CA', 'Test CA (not trusted)');
    app = await startTestApp({ env: { TRUST_ANCHORS: dscCa.certificatePem } });
    owner = await app.createUser();
    pfxId = await uploadTestPfx(app, owner.token, { commonName: 'Acme Legal Seal', issuer: dscCa });
    if (!hasPdfsig) console.warn('pdfsig (poppler-utils) is not installed: signatures are verified in-process only');
  });
  afterAll(async () => app.close());

  async function signerCall<T = any>(method: 'GET' | 'POST', path: string, token: string, json?: unknown) {
    const response = await fetch(new URL(`/signer-api${path}`, app.url), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) },
      body: json ? JSON.stringify(json) : undefined,
    });
    return { status: response.status, body: (await response.json()) as Envelope<T> };
  }

  async function finalDocument(clientId: string): Promise<Buffer> {
    const link = await rest<any>(app, 'GET', '/esign/download-pdf', { token: owner.token, query: { client_id: clientId } });
    expect(link.status).toBe(200);
    return Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
  }

  /**
   * A completed document: every signature valid, the last one over everything but the long-term updates (a /DSS and
   * a document time-stamp over the whole file), readable by poppler and qpdf.
   */
  async function expectValidlySigned(pdf: Buffer, signatures: number) {
    const embedded = await signaturesOf(pdf);
    expect(embedded).toHaveLength(signatures);
    for (const signature of embedded) {
      expect(
        signature.verification.digestValid && signature.verification.signatureValid,
        signature.verification.problems.join('; '),
      ).toBe(true);
    }
    expect(await longTermTailProblems(pdf)).toEqual([]);
    if (hasPdfsig) {
      const report = pdfsigReport(pdf);
      expect(report.map((entry) => entry.kind)).toEqual([...Array(signatures).fill('signature'), 'document-timestamp']);
      expect(report.slice(0, -1).every((entry) => entry.valid && !entry.total)).toBe(true);
      expect(report.at(-1)!.total).toBe(true);
    }
    if (hasQpdf) qpdfCheck(pdf);
    await PDFDocument.load(pdf);
    return embedded;
  }

  it('a parallel session: every signer may sign at once; racing signatures are each an update over the last, all valid', async () => {
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signing_order: 'parallel',
        signers: [
          signerInput({ full_name: 'Asha Rao', elements: [signatureAt(0, 72, 640)], notification: { invite: true } }),
          signerInput({ full_name: 'Vikram Singh', elements: [signatureAt(0, 300, 640)], notification: { invite: true } }),
          signerInput({ full_name: 'Meera Iyer', elements: [signatureAt(1, 72, 640)], notification: { invite: true } }),
        ],
      }),
    );
    expect(session.signing_order).toBe('parallel');
    // Everyone is eligible and invited at once; no one's turn is waited for.
    expect(session.signers.map((signer: any) => signer.eligible)).toEqual([true, true, true]);
    const invited = await app.services.orm.em
      .fork()
      .getConnection()
      .execute<{ n: number }[]>(`select count(distinct signer_id)::int as n from notifications where session_id = ? and kind = 'invite'`, [
        session.client_id,
      ]);
    expect(invited[0].n).toBe(3);
    const views = await Promise.all(session.signers.map((signer: any) => signerCall('GET', '/session', signer.token)));
    expect(views.map((view) => [view.body.data.signer.eligible, view.body.data.whose_turn])).toEqual([
      [true, null],
      [true, null],
      [true, null],
    ]);

    // All three at once, last signer first in the array: the session lock puts them one after the other.
    const answers = await Promise.all(
      [...session.signers].reverse().map((signer: any) => signerCall('POST', '/sign', signer.token, { consent: true })),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const read = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } });
    expect(read.body.data).toMatchObject({ status: 'completed', signer_idx: 3 });
    expect(read.body.data.signers.map((signer: any) => signer.status)).toEqual(['completed', 'completed', 'completed']);

    const pdf = await finalDocument(session.client_id);
    await expectValidlySigned(pdf, 3);
    if (hasPdfsig) expect(new Set(pdfsigReport(pdf).slice(0, -1).map((entry) => entry.fieldName)).size).toBe(3);
    const verified = await rest<any>(app, 'GET', '/esign/verify', { token: owner.token, query: { client_id: session.client_id } });
    expect(verified.body.data.all_valid).toBe(true);
    expect(verified.body.data.revisions.slice(1).every((revision: any) => revision.verdict === 'signing_only')).toBe(true);
  });

  it('signs each signer in turn through the signer API and completes the session', async () => {
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signers: [
          signerInput({ full_name: 'Asha Rao', reason: 'Party', elements: [signatureAt(0, 72, 640), signatureAt(3, 72, 500)] }),
          signerInput({ full_name: 'Acme Legal', sign_type: 'pfx', pfx_id: pfxId, elements: [signatureAt(3, 300, 500)] }),
          signerInput({ full_name: 'José Witness', elements: [] }),
        ],
      }),
    );
    const [first, second, third] = session.signers;

    // Out of turn, without consent, or with an integrator token: refused, nothing signed.
    expect((await signerCall('POST', '/sign', second.token, { consent: true })).status).toBe(409);
    expect((await signerCall('POST', '/sign', first.token, {})).status).toBe(400);
    expect((await signerCall('POST', '/sign', owner.token, { consent: true })).status).toBe(401);
    expect((await signerCall('GET', '/session', 'not-a-token')).status).toBe(401);

    const view = await signerCall('GET', '/session', first.token);
    expect(view.body.data).toMatchObject({ signer: { full_name: 'Asha Rao', eligible: true }, whose_turn: { position: 0 } });
    expect(JSON.stringify(view.body.data)).not.toContain(second.token);
    const doc = await fetch(new URL('/signer-api/document', app.url), { headers: { authorization: `Bearer ${first.token}` } });
    expect(doc.headers.get('content-type')).toBe('application/pdf');

    for (const [index, signer] of [first, second, third].entries()) {
      const signed = await signerCall('POST', '/sign', signer.token, { consent: true });
      expect(signed.status, JSON.stringify(signed.body)).toBe(200);
      expect(signed.body.data.signer.status).toBe('completed');
      const details = (
        await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } })
      ).body.data;
      expect(details.signer_idx).toBe(index + 1);
      expect(details.status).toBe(index === 2 ? 'completed' : 'pending');
    }
    // Signing twice is refused.
    expect((await signerCall('POST', '/sign', third.token, { consent: true })).status).toBe(409);

    const pdf = await finalDocument(session.client_id);
    const signatures = await expectValidlySigned(pdf, 3);
    expect(signatures.map((s) => s.verification.signerSubject)).toEqual([
      expect.stringContaining('Esign Sandbox Document Signer'),
      expect.stringContaining('Acme Legal Seal'),
      expect.stringContaining('Esign Sandbox Document Signer'),
    ]);
    expect((await PDFDocument.load(pdf)).getPageCount()).toBe(4);
  });

  it('signs a session whose document carries stamp pages and image elements', async () => {
    const file = await uploadPdf(app, owner.token);
    const asset = await uploadAsset(app, owner.token);
    const order = await rest<any>(app, 'POST', '/stamps/create-order', {
      token: owner.token,
      json: {
        state_code: 'MH',
        article_id: 'MH-5',
        first_party_name: 'A',
        second_party_name: 'B',
        stamp_duty_amount: 100,
        consideration_amount: 1,
        quantity: 1,
        mock: true,
      },
    });
    for (let i = 0; i < 100; i++) {
      const status = await rest<any>(app, 'GET', '/stamps/order-status', {
        token: owner.token,
        query: { client_id: order.body.data.client_id },
      });
      if (status.body.data.status_counts.available === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        stamp: { amount: '100', state_code: 'MH', article_id: 'MH-5', mock: true },
        signers: [
          signerInput({
            elements: [signatureAt(1, 72, 600), { x: 300, y: 600, page: 1, type: 'image', alignment: 'left', value: asset }],
          }),
        ],
      }),
    );
    expect((await signerCall('POST', '/sign', session.signers[0].token, { consent: true })).status).toBe(200);
    const pdf = await finalDocument(session.client_id);
    await expectValidlySigned(pdf, 1);
    expect((await PDFDocument.load(pdf)).getPageCount()).toBe(5);
    const stamps = await rest<any>(app, 'GET', '/stamps/order-status', {
      token: owner.token,
      query: { client_id: order.body.data.client_id },
    });
    expect(stamps.body.data.status_counts.used).toBe(1);
  });

  it('shows a wet-signature image inside the appearance when the signature element carries one', async () => {
    const file = await uploadPdf(app, owner.token);
    const asset = await uploadAsset(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signers: [signerInput({ elements: [{ ...signatureAt(0, 72, 600), width: 220, height: 60, value: asset }] })],
      }),
    );
    expect((await signerCall('POST', '/sign', session.signers[0].token, { consent: true })).status).toBe(200);
    const pdf = await finalDocument(session.client_id);
    await expectValidlySigned(pdf, 1);
    const doc = await PDFDocument.load(pdf);
    const field = doc
      .getForm()
      .getFields()
      .find((f) => f.getName() === session.signers[0].signer_id)!;
    const widget = field.acroField.getWidgets()[0];
    const appearance = doc.context.lookup(widget.dict.lookup(PDFName.of('AP'), PDFDict).get(PDFName.of('N'))) as PDFRawStream;
    const image = appearance.dict
      .lookup(PDFName.of('Resources'), PDFDict)
      .lookup(PDFName.of('XObject'), PDFDict)
      .lookup(PDFName.of('Im1'));
    expect((image as PDFRawStream).dict.get(PDFName.of('Subtype'))).toEqual(PDFName.of('Image'));
  });

  it('refuses to sign a cancelled session, and a PFX deleted in between', async () => {
    const file = await uploadPdf(app, owner.token);
    const cancelled = await createSession(app, owner.token, sessionBody(file));
    await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: cancelled.client_id } });
    expect((await signerCall('POST', '/sign', cancelled.signers[0].token, { consent: true })).status).toBe(409);

    const ephemeral = await uploadTestPfx(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { sign_type: 'pfx', signers: [signerInput({ pfx_id: ephemeral })] }),
    );
    await fetch(new URL('/graphql', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ query: `mutation { deletePfx(pfx_id: "${ephemeral}") { pfx_id } }` }),
    });
    const refused = await signerCall('POST', '/sign', session.signers[0].token, { consent: true });
    expect(refused.status).toBe(409);
  });

  describe('every unprotected PDF of the corpus', () => {
    async function call(path: string, token: string, json: unknown) {
      return signerCall('POST', path, token, json);
    }
    for (const entry of corpusPdfs().filter((e) => !e.encrypted && !UNSIGNABLE.has(e.path))) {
      it(`${entry.path}: aadhaar, suresign and pfx, all valid`, async () => {
        const file = await uploadPdf(app, owner.token, corpusFile(entry.path), entry.path.split('/').pop());
        const last = entry.pages - 1;
        const session = await createSession(
          app,
          owner.token,
          sessionBody(file, {
            signers: [
              signerInput({
                full_name: 'Meera Iyer',
                sign_type: 'aadhaar',
                name_match: true,
                elements: [signatureAt(0, 40, 40)],
              }),
              signerInput({ full_name: 'Second Signer', elements: [signatureAt(last, 240, 120)] }),
              signerInput({ full_name: 'Seal', sign_type: 'pfx', pfx_id: pfxId, elements: [signatureAt(last, 40, 120)] }),
            ],
          }),
        );
        const [aadhaar, suresign, pfx] = session.signers;
        const first = await signAsAadhaar(app, aadhaar.token, '9876 9876 9870');
        expect(first.status, JSON.stringify(first.body)).toBe(200);
        for (const signer of [suresign, pfx]) {
          const signed = await call('/sign', signer.token, { consent: true });
          expect(signed.status, JSON.stringify(signed.body)).toBe(200);
        }
        const signatures = await expectValidlySigned(await finalDocument(session.client_id), 3);
        expect(signatures[0].verification.signerSubject).toContain('CN=Meera Iyer');
        const report = await rest<any>(app, 'GET', '/esign/verify', {
          token: owner.token,
          query: { client_id: session.client_id },
        });
        expect(report.body.data.all_valid).toBe(true);
      });
    }
  });
});
