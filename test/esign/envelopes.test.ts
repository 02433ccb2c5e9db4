import { createHash } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { EnvelopeElementsDocument } from '../__generated__/graphql';
import { gql, rest, signerApi } from '../helpers/clients';
import { corpusFile, MINIMAL_PDF } from '../helpers/fixtures';
import {
  createStampOrder,
  FOUR_PAGE_PDF,
  initializeEsign,
  sessionBody,
  signAsAadhaar,
  signatureAt,
  signerInput,
  uploadPdf,
} from '../helpers/factories';
import { pdfsigReport, qpdfCheck } from '../helpers/pdf-signatures';
import { pdfText } from '../helpers/pdf-text';
import { until } from '../helpers/until';

const THIRD_PDF = corpusFile('002-trivial-libre-office-writer/002-trivial-libre-office-writer.pdf');

/**
 * Envelopes: a session of several documents. Each signer signs every document carrying one of their elements in one
 * sitting (an Aadhaar signer in one ESP transaction, one InputHash per document); stamps go in front of the document
 * the request names; completion brings every document to B-LTA; the contract's single-document answers stay as they
 * were.
 */
describe('envelopes: several documents in one session', () => {
  let app: TestApp;
  let owner: TestUser;
  let files: string[];

  beforeAll(async () => {
    app = await startTestApp({ env: { STAMP_VENDOR_LATENCY_MS: '0', STAMP_VENDOR_REJECTION_RATE: '0' } });
    owner = await app.createUser();
    files = [
      await uploadPdf(app, owner.token, FOUR_PAGE_PDF, 'sanction-letter.pdf'),
      await uploadPdf(app, owner.token, FOUR_PAGE_PDF, 'agreement.pdf'),
      await uploadPdf(app, owner.token, THIRD_PDF, 'schedule.pdf'),
    ];
  });
  afterAll(async () => app.close());

  const sql = <T>(query: string, params: unknown[] = []) =>
    app.services.orm.em.fork().getConnection().execute<T[]>(query, params);
  const documentsOf = async (clientId: string) =>
    (await rest<any[]>(app, 'GET', '/esign/documents', { token: owner.token, query: { client_id: clientId } })).body.data!;
  const fileBytes = async (fileId: string) => {
    const details = await rest<any>(app, 'GET', '/files/details', { token: owner.token, query: { client_id: fileId } });
    return Buffer.from(await (await fetch(details.body.data.download_url)).arrayBuffer());
  };

  /** One mock stamp of 100 rupees in stock, procured. */
  async function stockOneStamp(): Promise<string> {
    const order = await createStampOrder(app, owner.token, { mock: true });
    expect(order.status, JSON.stringify(order.body)).toBe(200);
    const orderId = order.body.data!.client_id;
    await until(
      async () => (await sql(`select 1 from stamp_instances where order_id = ? and status = 'pending'`, [orderId])).length === 0,
      'procurement',
      { timeoutMs: 60_000 },
    );
    return (await sql<{ id: string }>('select id from stamp_instances where order_id = ?', [orderId]))[0]!.id;
  }

  it('three documents, stamps on the second, an Aadhaar signer (one ESP transaction) and a suresign one: every document to B-LTA', async () => {
    const stamp = await stockOneStamp();
    const created = await initializeEsign(app, owner.token, {
      sign_type: 'suresign',
      documents: [
        { file_id: files[0], name: 'Sanction letter' },
        { file_id: files[1], name: 'Loan agreement' },
        { file_id: files[2] },
      ],
      stamp: { amount: '100', state_code: 'MH', article_id: 'MH-5', mock: true, document: 1 },
      signers: [
        signerInput({
          full_name: 'Asha Rao',
          sign_type: 'aadhaar',
          elements: [signatureAt(0), { ...signatureAt(3), document: 1 }, { ...signatureAt(0), document: 2 }],
        }),
        signerInput({ full_name: 'Vikram Singh', email: 'vikram@example.com', elements: [{ ...signatureAt(1), document: 1 }] }),
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const session = created.body.data!;
    // The contract's fields name the first document.
    expect(session).toMatchObject({ file_id: files[0], filename: 'Sanction letter' });
    expect(
      (await sql<{ session_id: string }>('select session_id from stamp_instances where id = ?', [stamp]))[0]!.session_id,
    ).toBe(session.client_id);

    const before = await documentsOf(session.client_id);
    expect(before.map((document) => [document.position, document.name, document.file_id, document.stamp_page_count])).toEqual([
      [0, 'Sanction letter', files[0], 0],
      [1, 'Loan agreement', files[1], 1],
      [2, 'schedule.pdf', files[2], 0],
    ]);
    expect(before[1].signatures.map((signature: any) => signature.signer_id)).toEqual(session.signers.map((s) => s.signer_id));
    expect(before[2].signatures.map((signature: any) => signature.signer_id)).toEqual([session.signers[0]!.signer_id]);
    // Which elements each document carries: by field_id over REST, and each element's document over GraphQL.
    const fieldIds = session.signers.map((signer: any) => signer.elements.map((element: any) => element.field_id));
    expect(before.map((document) => document.field_ids)).toEqual([
      [fieldIds[0][0]],
      [fieldIds[0][1], fieldIds[1][0]],
      [fieldIds[0][2]],
    ]);
    const graph = await gql(app, owner.token, EnvelopeElementsDocument, { client_id: session.client_id });
    expect(graph.data!.esignSession.signers.map((signer) => signer.elements.map((element) => element.document))).toEqual([
      [0, 1, 2],
      [1],
    ]);
    expect(JSON.stringify(session.signers[0].elements)).not.toContain('"document"');

    // The signer's page lists the documents and reads each.
    const view = await signerApi(app, 'GET', '/session', session.signers[0]!.token);
    expect(view.body.data.session.documents.map((document: any) => [document.name, document.stamp_pages])).toEqual([
      ['Sanction letter', 0],
      ['Loan agreement', 1],
      ['schedule.pdf', 0],
    ]);
    expect(view.body.data.signer.fields.map((field: any) => [field.document, field.page])).toEqual([
      [0, 0],
      [1, 4],
      [2, 0],
    ]);
    const second = await fetch(new URL('/signer-api/document?document=1', app.url), {
      headers: { authorization: `Bearer ${session.signers[0]!.token}` },
    });
    expect(second.status).toBe(200);
    expect(pdfText(Buffer.from(await second.arrayBuffer()))).toBeTruthy();

    // One OTP signs all three.
    const aadhaar = await signAsAadhaar(app, session.signers[0]!.token);
    expect(aadhaar.status, JSON.stringify(aadhaar.body)).toBe(200);
    const [transaction] = await sql<{ documents: any[] }>('select documents from esp_transactions where signer_id = ?', [
      session.signers[0]!.signer_id,
    ]);
    expect(transaction!.documents.map((document) => [document.id, document.position])).toEqual([
      ['1', 0],
      ['2', 1],
      ['3', 2],
    ]);
    const halfway = await documentsOf(session.client_id);
    expect(halfway.map((document) => document.status)).toEqual(['completed', 'pending', 'completed']);

    const suresign = await signerApi(app, 'POST', '/sign', session.signers[1]!.token, { consent: true });
    expect(suresign.status, JSON.stringify(suresign.body)).toBe(200);

    const details = await rest<any>(app, 'GET', '/esign/details', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    expect(details.body.data.status).toBe('completed');
    const after = await documentsOf(session.client_id);
    expect(details.body.data.current_pdf_file_id).toBe(after[0].current_pdf_file_id);
    const expectedSignatures = [1, 2, 1];
    const finals: Buffer[] = [];
    for (const document of after) {
      expect(document.status).toBe('completed');
      const pdf = await fileBytes(document.current_pdf_file_id);
      finals.push(pdf);
      qpdfCheck(pdf);
      const report = pdfsigReport(pdf);
      const signatures = report.filter((entry) => entry.kind === 'signature');
      expect(signatures, document.name).toHaveLength(expectedSignatures[document.position]!);
      expect(signatures.every((entry) => entry.valid)).toBe(true);
      // B-LTA: a document time-stamp over the whole file.
      expect(report.some((entry) => entry.kind === 'document-timestamp')).toBe(true);
    }
    // The stamp page is in front of the agreement only.
    expect(pdfText(finals[1]!)).toMatch(/stamp/i);

    // The certificate of completion lists every document with both fingerprints.
    const link = await rest<any>(app, 'GET', '/esign/download-certificate', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    const certificate = pdfText(Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer()), { layout: false });
    expect(certificate).toContain('Documents (3)');
    for (const [position, document] of after.entries()) {
      expect(certificate).toContain(document.name);
      const original = (await sql<{ sha256: string }>('select sha256 from files where id = ?', [files[position]]))[0]!.sha256;
      expect(certificate).toContain(original);
      expect(certificate).toContain(createHash('sha256').update(finals[position]!).digest('hex'));
    }

    // The audit trail says which documents each signature went into.
    const audit = await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } });
    const signedEvents = audit.body.data.events.filter((event: any) => event.event === 'signed');
    expect(signedEvents.map((event: any) => event.details.documents.map((document: any) => document.name))).toEqual([
      ['Sanction letter', 'Loan agreement', 'schedule.pdf'],
      ['Loan agreement'],
    ]);
  });

  it('a subscription to the session carries its documents, from the current state to every document signed', async () => {
    const created = await initializeEsign(app, owner.token, {
      sign_type: 'suresign',
      documents: [
        { file_id: files[0], name: 'Offer letter' },
        { file_id: files[2], name: 'NDA' },
      ],
      signers: [signerInput({ elements: [signatureAt(0), { ...signatureAt(0), document: 1 }] })],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const session = created.body.data!;
    const client = createClient({
      url: `${app.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${owner.token}` },
      retryAttempts: 0,
    });
    type Update = { status: string; documents: { name: string; status: string; signatures: { status: string }[] }[] };
    const updates: Update[] = [];
    const errors: unknown[] = [];
    const stop = client.subscribe<{ esignSessionUpdated: Update }>(
      {
        query: `subscription ($id: String!) {
          esignSessionUpdated(client_id: $id) { status documents { name status signatures { status } } }
        }`,
        variables: { id: session.client_id },
      },
      {
        next: (result) => (result.data ? updates.push(result.data.esignSessionUpdated) : errors.push(result.errors)),
        error: (error) => errors.push(error),
        complete: () => undefined,
      },
    );
    try {
      await until(() => updates.length > 0 || errors.length > 0, 'the current state');
      expect(errors).toEqual([]);
      expect(updates[0]!.documents.map((document) => [document.name, document.status])).toEqual([
        ['Offer letter', 'pending'],
        ['NDA', 'pending'],
      ]);
      expect((await signerApi(app, 'POST', '/sign', session.signers[0]!.token, { consent: true })).status).toBe(200);
      await until(() => updates.some((update) => update.status === 'completed'), 'the completed session');
      const last = updates.at(-1)!;
      expect(last.documents.map((document) => [document.name, document.status, document.signatures.length])).toEqual([
        ['Offer letter', 'completed', 1],
        ['NDA', 'completed', 1],
      ]);
    } finally {
      stop();
      await client.dispose();
    }
  });

  it('refuses what an envelope cannot be, naming the field', async () => {
    const both = await initializeEsign(app, owner.token, sessionBody(files[0]!, { documents: [{ file_id: files[1] }] }));
    expect(both.status).toBe(400);
    expect(JSON.stringify(both.body)).toContain('documents');

    const outside = await initializeEsign(app, owner.token, {
      sign_type: 'suresign',
      documents: [{ file_id: files[0] }, { file_id: files[1] }],
      signers: [signerInput({ elements: [{ ...signatureAt(0), document: 2 }] })],
    });
    expect(outside.status).toBe(400);
    expect(JSON.stringify(outside.body)).toContain('signers[0].elements[0].document');

    const tooMany = await initializeEsign(app, owner.token, {
      sign_type: 'suresign',
      documents: Array.from({ length: 11 }, () => ({ file_id: files[0] })),
      signers: [signerInput()],
    });
    expect(tooMany.status).toBe(400);

    const pageOff = await initializeEsign(app, owner.token, {
      sign_type: 'suresign',
      documents: [{ file_id: files[0] }, { file_id: await uploadPdf(app, owner.token, MINIMAL_PDF) }],
      signers: [signerInput({ elements: [{ ...signatureAt(3), document: 1 }] })],
    });
    expect(pageOff.status).toBe(400);
    expect(JSON.stringify(pageOff.body)).toContain('signers[0].elements[0].page');
  });
});
