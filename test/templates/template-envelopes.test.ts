import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../src/modules';
import { createOrmOptions } from '../../src/platform/db/orm-options';
import { SaveTemplateDocument, TemplateDocument, UpdateTemplateDocument } from '../__generated__/graphql';
import { createTestDatabase, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql, rest, signerApi, type RestResponse } from '../helpers/clients';
import { corpusFile, MINIMAL_PDF } from '../helpers/fixtures';
import { FOUR_PAGE_PDF, signatureAt, uploadAsset, uploadPdf } from '../helpers/factories';
import { pdfsigReport, qpdfCheck } from '../helpers/pdf-signatures';

const THIRD_PDF = corpusFile('002-trivial-libre-office-writer/002-trivial-libre-office-writer.pdf');
const asha = { full_name: 'Asha Rao', email: 'asha@example.com' };
const vikram = { full_name: 'Vikram Singh', email: 'vikram@example.com' };

/**
 * Templates of several documents: saved with `documents` (the session rules and limit) instead of `file_id`, read
 * back with `documents` (`file_id` the first), their elements naming a document, and starting envelopes that carry
 * every document by the template's names.
 */
describe('templates with several documents', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  /** Four pages, four pages, one page. */
  let files: string[];
  let foreignFileId: string;
  let assetId: string;

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  const countTemplates = async () => Number((await sql<{ n: number }>('select count(*)::int as n from templates'))[0].n);
  const save = (body: Record<string, unknown>, token = owner.token) =>
    rest<any>(app, 'POST', '/templates/save', { token, json: body });
  const update = (body: Record<string, unknown>) =>
    rest<any>(app, 'PUT', '/templates/update', { token: owner.token, json: body });
  const details = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/templates/details', { token: owner.token, query: { client_id: clientId } })).body.data;
  const fromTemplate = (body: Record<string, unknown>) =>
    rest<any>(app, 'POST', '/esign/initialize-from-template', { token: owner.token, json: body });
  const documentsOf = async (clientId: string) =>
    (await rest<any[]>(app, 'GET', '/esign/documents', { token: owner.token, query: { client_id: clientId } })).body.data!;
  const fileBytes = async (fileId: string) => {
    const read = await rest<any>(app, 'GET', '/files/details', { token: owner.token, query: { client_id: fileId } });
    return Buffer.from(await (await fetch(read.body.data.download_url)).arrayBuffer());
  };
  function refused(response: RestResponse<any>, status: number, message: string): string[] {
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(response.body).toMatchObject({ data: null, status_code: status, message, success: false });
    return (response.body.errors ?? []).map((error) => error.field);
  }
  const problemOf = (response: RestResponse<any>, field: string) =>
    response.body.errors?.find((error) => error.field === field)?.problem;

  /** The three documents, the second and third named by the template, elements on documents 0, 1 and 2. */
  const envelopeBody = (overrides: Record<string, unknown> = {}) => ({
    name: 'Loan pack',
    documents: [
      { file_id: files[0], name: 'Sanction letter' },
      { file_id: files[1], name: 'Loan agreement' },
      { file_id: files[2] },
    ],
    signers: [
      { reason: 'Borrower', elements: [signatureAt(0), { ...signatureAt(3), document: 1 }, { ...signatureAt(0), document: 2 }] },
      { reason: 'Guarantor', elements: [{ ...signatureAt(1), document: 1 }] },
    ],
    ...overrides,
  });
  async function savedEnvelope(overrides: Record<string, unknown> = {}): Promise<any> {
    const response = await save(envelopeBody(overrides));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.data;
  }

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    other = await app.createUser();
    files = [
      await uploadPdf(app, owner.token, FOUR_PAGE_PDF, 'sanction-letter.pdf'),
      await uploadPdf(app, owner.token, FOUR_PAGE_PDF, 'agreement.pdf'),
      await uploadPdf(app, owner.token, THIRD_PDF, 'schedule.pdf'),
    ];
    foreignFileId = await uploadPdf(app, other.token);
    assetId = await uploadAsset(app, owner.token);
  });
  afterAll(async () => app.close());

  it('saves and reads the documents in order, file_id the first, names defaulting to the upload’s; GraphQL reads the same', async () => {
    const template = await savedEnvelope();
    expect(template.file_id).toBe(files[0]);
    expect(template.documents).toEqual([
      { position: 0, name: 'Sanction letter', file_id: files[0] },
      { position: 1, name: 'Loan agreement', file_id: files[1] },
      { position: 2, name: 'schedule.pdf', file_id: files[2] },
    ]);
    expect(await details(template.client_id)).toEqual(template);
    const viaGraphql = await gql(app, owner.token, TemplateDocument, { client_id: template.client_id });
    expect(viaGraphql.data!.template).toEqual(template);
    const [row] = await sql('select file_id, documents, signers from templates where id = ?', [template.client_id]);
    expect(row.file_id).toBe(files[0]);
    expect(row.documents).toEqual([
      { file_id: files[0], name: 'Sanction letter' },
      { file_id: files[1], name: 'Loan agreement' },
      { file_id: files[2], name: 'schedule.pdf' },
    ]);
    // The elements keep their documents (absent on the first, as a session stores them).
    expect(row.signers.map((signer: any) => signer.elements.map((element: any) => element.document ?? 0))).toEqual([
      [0, 1, 2],
      [1],
    ]);

    // A template saved with file_id has one document, named as its upload.
    const single = (await save({ name: 'One', file_id: files[2], signers: [{ elements: [signatureAt(0)] }] })).body.data;
    expect(single.documents).toEqual([{ position: 0, name: 'schedule.pdf', file_id: files[2] }]);
  });

  it('saveTemplate over GraphQL takes documents too', async () => {
    const answer = await gql(app, owner.token, SaveTemplateDocument, {
      name: 'GraphQL pack',
      documents: [{ file_id: files[2], name: 'Schedule' }, { file_id: files[0] }],
      signers: [{ elements: [{ x: 72, y: 600, page: 3, document: 1, type: 'signature', alignment: 'left' }] }],
    });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.saveTemplate).toMatchObject({
      file_id: files[2],
      documents: [
        { position: 0, name: 'Schedule', file_id: files[2] },
        { position: 1, name: 'sanction-letter.pdf', file_id: files[0] },
      ],
    });
    const refusedAnswer = await gql(app, owner.token, SaveTemplateDocument, {
      name: 'GraphQL pack',
      documents: [{ file_id: files[2] }],
      signers: [{ elements: [{ x: 72, y: 600, page: 0, document: 1, type: 'signature', alignment: 'left' }] }],
    });
    expect(refusedAnswer.errors?.[0]?.extensions).toMatchObject({
      code: 'bad_request',
      errors: [{ field: 'signers[0].elements[0].document' }],
    });
  });

  it('refuses an element outside the documents with 400 naming the field, in the words initialize-esign uses', async () => {
    const before = await countTemplates();
    const outside = await save(envelopeBody({ signers: [{ elements: [signatureAt(0), { ...signatureAt(0), document: 3 }] }] }));
    expect(refused(outside, 400, 'bad_request')).toEqual(['signers[0].elements[1].document']);
    expect(problemOf(outside, 'signers[0].elements[1].document')).toBe('must be a zero-based index into documents (0 to 2)');

    // A file_id template has document 0 only.
    const single = await save({ name: 'One', file_id: files[0], signers: [{ elements: [{ ...signatureAt(0), document: 1 }] }] });
    expect(refused(single, 400, 'bad_request')).toEqual(['signers[0].elements[0].document']);
    expect(problemOf(single, 'signers[0].elements[0].document')).toBe('must be a zero-based index into documents (0 to 0)');

    // Pages are checked against the element's own document: the third has one page.
    const pageOff = await save(envelopeBody({ signers: [{ elements: [{ ...signatureAt(3), document: 2 }] }] }));
    expect(refused(pageOff, 400, 'bad_request')).toEqual(['signers[0].elements[0].page']);
    expect(problemOf(pageOff, 'signers[0].elements[0].page')).toBe('the PDF has 1 page(s): pages are 0 to 0');
    expect(await countTemplates()).toBe(before);
  });

  it('refuses what the documents cannot be, as initialize-esign does (every failure bad_request here)', async () => {
    const before = await countTemplates();
    expect(refused(await save(envelopeBody({ file_id: files[0] })), 400, 'bad_request')).toEqual(['documents']);
    expect(refused(await save(envelopeBody({ documents: [] })), 400, 'bad_request')).toEqual(['documents']);
    const eleven = Array.from({ length: 11 }, () => ({ file_id: files[0] }));
    expect(refused(await save(envelopeBody({ documents: eleven })), 400, 'bad_request')).toEqual(['documents']);
    const ten = Array.from({ length: 10 }, () => ({ file_id: files[0] }));
    expect((await save(envelopeBody({ documents: ten }))).status).toBe(200);
    expect(
      refused(await save(envelopeBody({ documents: [{ file_id: files[0] }, { name: 'nameless' }] })), 400, 'bad_request'),
    ).toEqual(['documents[1].file_id']);
    expect(
      refused(await save(envelopeBody({ documents: [{ file_id: files[0], name: 'n'.repeat(256) }] })), 400, 'bad_request'),
    ).toEqual(['documents[0].name']);
    expect(refused(await save(envelopeBody({ documents: undefined })), 400, 'bad_request')).toEqual(['file_id']);
    expect(await countTemplates()).toBe(before + 1);
  });

  it("answers another user's file, an asset or an unknown file among the documents with 404 naming each, as for file_id", async () => {
    const before = await countTemplates();
    const documents = [{ file_id: files[0] }, { file_id: foreignFileId }, { file_id: assetId }, { file_id: 'file_doesnotexist' }];
    expect(refused(await save(envelopeBody({ documents, signers: [{ elements: [signatureAt(0)] }] })), 404, 'not_found')).toEqual(
      ['documents[1].file_id', 'documents[2].file_id', 'documents[3].file_id'],
    );
    expect(await countTemplates()).toBe(before);
    const template = await savedEnvelope();
    expect(
      refused(await update({ client_id: template.client_id, documents: [{ file_id: foreignFileId }] }), 404, 'not_found'),
    ).toEqual(['documents[0].file_id']);
    expect((await details(template.client_id)).version).toBe(1);
  });

  it('update replaces the documents whole; the saved elements must fit them unless new signers come along', async () => {
    const template = await savedEnvelope();
    const fieldIds = template.signers.flatMap((signer: any) => signer.elements.map((element: any) => element.field_id));

    // Two documents leave the element on the third outside; a one-page third document leaves page 3 of the second off.
    const fewer = await update({ client_id: template.client_id, documents: [{ file_id: files[0] }, { file_id: files[1] }] });
    expect(refused(fewer, 400, 'bad_request')).toEqual(['signers[0].elements[2].document']);
    const shorter = await update({
      client_id: template.client_id,
      documents: [{ file_id: files[0] }, { file_id: files[2] }, { file_id: files[2] }],
    });
    expect(refused(shorter, 400, 'bad_request')).toEqual(['signers[0].elements[1].page', 'signers[1].elements[0].page']);
    expect(refused(await update({ client_id: template.client_id, file_id: files[0] }), 400, 'bad_request')).toEqual([
      'signers[0].elements[1].document',
      'signers[0].elements[2].document',
      'signers[1].elements[0].document',
    ]);
    expect(
      refused(
        await update({ client_id: template.client_id, file_id: files[0], documents: [{ file_id: files[0] }] }),
        400,
        'bad_request',
      ),
    ).toEqual(['documents']);
    expect((await details(template.client_id)).version).toBe(1);

    // Renamed and reordered: the saved signers stay, field ids and all.
    const renamed = await update({
      client_id: template.client_id,
      documents: [{ file_id: files[1], name: 'Agreement' }, { file_id: files[0], name: 'Sanction' }, { file_id: files[2] }],
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.data).toMatchObject({
      version: 2,
      file_id: files[1],
      documents: [
        { position: 0, name: 'Agreement', file_id: files[1] },
        { position: 1, name: 'Sanction', file_id: files[0] },
        { position: 2, name: 'schedule.pdf', file_id: files[2] },
      ],
    });
    expect(renamed.body.data.signers.flatMap((s: any) => s.elements.map((e: any) => e.field_id))).toEqual(fieldIds);

    // Without documents they stay; a name change keeps them.
    expect((await update({ client_id: template.client_id, name: 'Renamed pack' })).body.data.documents).toEqual(
      renamed.body.data.documents,
    );

    // Back to one document, with signers that fit it; over GraphQL.
    const single = await gql(app, owner.token, UpdateTemplateDocument, {
      client_id: template.client_id,
      file_id: files[2],
      signers: [{ elements: [{ x: 72, y: 600, page: 0, type: 'signature', alignment: 'left' }] }],
    });
    expect(single.errors).toBeUndefined();
    expect(single.data!.updateTemplate).toMatchObject({
      version: 4,
      file_id: files[2],
      documents: [{ position: 0, name: 'schedule.pdf', file_id: files[2] }],
    });
  });

  it('initialize-from-template starts an envelope of every document by the template’s names; stamp.document is checked against them', async () => {
    const template = await savedEnvelope();
    const refusedStamp = await fromTemplate({
      template_id: template.client_id,
      sign_type: 'suresign',
      stamp: { amount: '100', state_code: 'MH', article_id: 'MH-5', mock: true, document: 3 },
      signers: [asha, vikram],
    });
    expect(refused(refusedStamp, 400, 'bad_request')).toEqual(['stamp.document']);

    const created = await fromTemplate({ template_id: template.client_id, sign_type: 'suresign', signers: [asha, vikram] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const session = created.body.data;
    // The contract's fields name the first document.
    expect(session).toMatchObject({ file_id: files[0], filename: 'Sanction letter', template_id: template.client_id });
    expect(session.signers.map((signer: any) => signer.elements.map((element: any) => element.field_id))).toEqual(
      template.signers.map((signer: any) => signer.elements.map((element: any) => element.field_id)),
    );
    const documents = await documentsOf(session.client_id);
    expect(documents.map((document) => [document.position, document.name, document.file_id])).toEqual([
      [0, 'Sanction letter', files[0]],
      [1, 'Loan agreement', files[1]],
      [2, 'schedule.pdf', files[2]],
    ]);
    // Each element stayed on its document: who signs which.
    const [first, second] = session.signers.map((signer: any) => signer.signer_id);
    expect(documents.map((document) => document.signatures.map((signature: any) => signature.signer_id))).toEqual([
      [first],
      [first, second],
      [first],
    ]);
    const view = await signerApi(app, 'GET', '/session', session.signers[0].token);
    expect(view.body.data.signer.fields.map((field: any) => [field.document, field.page])).toEqual([
      [0, 0],
      [1, 3],
      [2, 0],
    ]);
  });

  it('a session from a three-document template signs through suresign to the end: every document signed by its signers', async () => {
    const template = await savedEnvelope();
    const created = await fromTemplate({ template_id: template.client_id, sign_type: 'suresign', signers: [asha, vikram] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const session = created.body.data;
    for (const signer of session.signers) {
      const signed = await signerApi(app, 'POST', '/sign', signer.token, { consent: true });
      expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    }
    const read = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } });
    expect(read.body.data.status).toBe('completed');
    const documents = await documentsOf(session.client_id);
    const expectedSignatures = [1, 2, 1];
    for (const document of documents) {
      expect(document.status).toBe('completed');
      const pdf = await fileBytes(document.current_pdf_file_id);
      qpdfCheck(pdf);
      const report = pdfsigReport(pdf);
      const signatures = report.filter((entry) => entry.kind === 'signature');
      expect(signatures, document.name).toHaveLength(expectedSignatures[document.position]!);
      expect(signatures.every((entry) => entry.valid)).toBe(true);
    }
  });

  it('a file_id template still starts a one-document session on that file, named as its upload', async () => {
    const single = (await save({ name: 'One', file_id: files[2], signers: [{ reason: 'Party', elements: [signatureAt(0)] }] }))
      .body.data;
    const created = await fromTemplate({ template_id: single.client_id, sign_type: 'suresign', signers: [asha] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.data).toMatchObject({ file_id: files[2], current_pdf_file_id: files[2], filename: 'schedule.pdf' });
    expect((await documentsOf(created.body.data.client_id)).map((document) => [document.name, document.file_id])).toEqual([
      ['schedule.pdf', files[2]],
    ]);
  });

  it('an update that reorders the documents checks each element’s page against its new document', async () => {
    // A one-page first document: page 2 of the second (four pages) is fine; swapped, page 2 of a one-page one is not.
    const minimal = await uploadPdf(app, owner.token, MINIMAL_PDF, 'minimal.pdf');
    const ok = await save({
      name: 'Mixed',
      documents: [{ file_id: minimal }, { file_id: files[1] }],
      signers: [{ elements: [signatureAt(0), { ...signatureAt(2), document: 1 }] }],
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const swapped = await update({ client_id: ok.body.data.client_id, documents: [{ file_id: files[1] }, { file_id: minimal }] });
    expect(refused(swapped, 400, 'bad_request')).toEqual(['signers[0].elements[1].page']);
  });
});

describe('the migration that gives templates their documents', () => {
  it('makes every existing template a one-document template of its file, named as the upload', async () => {
    const database = await createTestDatabase();
    const orm = await MikroORM.init(createOrmOptions(database.url, composition.entities, 2, () => undefined));
    try {
      const migrator = orm.getMigrator();
      await migrator.up({ to: 'Migration20261127050000_EspTransactionDocuments' });
      const db = orm.em.getConnection();
      await db.execute(`insert into users (id, email) values ('user_1', 'owner@example.com')`);
      await db.execute(`insert into files (id, user_id, kind, name, mime, size_bytes, sha256, page_count, storage_key)
        values ('file_1', 'user_1', 'pdf', 'lease.pdf', 'application/pdf', 10, 'aa', 4, 'k1'),
               ('file_2', 'user_1', 'pdf', 'nda.pdf', 'application/pdf', 10, 'bb', 1, 'k2')`);
      await db.execute(`insert into templates (id, user_id, name, file_id, signers)
        values ('template_1', 'user_1', 'Lease', 'file_1', '[]'), ('template_2', 'user_1', 'NDA', 'file_2', '[]')`);
      await migrator.up();
      expect(await db.execute('select id, file_id, documents from templates order by id')).toEqual([
        { id: 'template_1', file_id: 'file_1', documents: [{ file_id: 'file_1', name: 'lease.pdf' }] },
        { id: 'template_2', file_id: 'file_2', documents: [{ file_id: 'file_2', name: 'nda.pdf' }] },
      ]);
    } finally {
      await orm.close();
      await database.drop();
    }
  });
});
