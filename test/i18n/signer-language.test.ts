import { parse } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql, rest } from '../helpers/clients';
import { createSession, initializeEsign, sessionBody, signatureAt, signerInput, uploadPdf } from '../helpers/factories';
import { until } from '../helpers/until';

/**
 * A signer's `language` (docs/api.md, Languages): one of the documented BCP 47 tags, else `400 bad_request` naming the
 * field; stored on the signer and read back on both faces (null when not set); saved in templates as a default a
 * session's signer may override, and carried by bulk sends from the template.
 */
const LANGUAGE_DETAILS = parse(
  `query ($client_id: String!) { esignSession(client_id: $client_id) { signers { language } } }`,
) as TypedDocumentNode<{ esignSession: { signers: { language: string | null }[] } }, { client_id: string }>;

describe('the signer’s language', () => {
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app.close());

  const details = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data;

  it('is stored and read back on REST and GraphQL: the tag given (any case), null when not set', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        signers: [
          signerInput({ language: 'hi' }),
          signerInput({ language: ' TA ' }),
          signerInput(),
          signerInput({ language: '' }),
        ],
      }),
    );
    expect(session.signers.map((signer) => signer.language)).toEqual(['hi', 'ta', null, null]);
    expect((await details(session.client_id)).signers.map((signer: any) => signer.language)).toEqual(['hi', 'ta', null, null]);
    const read = await gql(app, owner.token, LANGUAGE_DETAILS, { client_id: session.client_id });
    expect(read.data!.esignSession.signers.map((signer) => signer.language)).toEqual(['hi', 'ta', null, null]);
    // Every documented tag is taken.
    const all = ['en', 'hi', 'bn', 'mr', 'te', 'ta', 'gu', 'kn', 'ml'];
    const every = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { signers: all.map((language) => signerInput({ language })) }),
    );
    expect(every.signers.map((signer) => signer.language)).toEqual(all);
  });

  it('refuses a tag not in the list with 400 bad_request naming the field, and creates nothing', async () => {
    for (const language of ['fr', 'hi-IN', 'Hindi', 'pa']) {
      const response = await initializeEsign(
        app,
        owner.token,
        sessionBody(fileId, { signers: [signerInput(), signerInput({ language })] }),
      );
      expect(response.status, language).toBe(400);
      expect(response.body).toMatchObject({ status_code: 400, message: 'bad_request', success: false });
      expect(response.body.errors).toEqual([
        { field: 'signers[1].language', problem: 'must be one of en, hi, bn, mr, te, ta, gu, kn, ml' },
      ]);
    }
  });

  it('is a template default: saved, read back, refused when unknown, and overridden by the session’s signer', async () => {
    const refused = await rest<any>(app, 'POST', '/templates/save', {
      token: owner.token,
      json: { name: 'Lease', file_id: fileId, signers: [{ reason: 'Tenant', language: 'xx', elements: [signatureAt()] }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      { field: 'signers[0].language', problem: 'must be one of en, hi, bn, mr, te, ta, gu, kn, ml' },
    ]);

    const saved = await rest<any>(app, 'POST', '/templates/save', {
      token: owner.token,
      json: {
        name: 'Lease',
        file_id: fileId,
        signers: [
          { reason: 'Tenant', language: 'kn', elements: [signatureAt()] },
          { reason: 'Owner', elements: [signatureAt(1)] },
        ],
      },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.data.signers.map((signer: any) => signer.language)).toEqual(['kn', null]);
    const template = saved.body.data.client_id;
    const read = await rest<any>(app, 'GET', '/templates/details', { token: owner.token, query: { client_id: template } });
    expect(read.body.data.signers.map((signer: any) => signer.language)).toEqual(['kn', null]);

    const start = async (signers: Record<string, unknown>[]) => {
      const response = await rest<any>(app, 'POST', '/esign/initialize-from-template', {
        token: owner.token,
        json: { template_id: template, sign_type: 'suresign', signers },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.data.signers.map((signer: any) => signer.language);
    };
    const asha = { full_name: 'Asha Rao', email: 'asha@example.com' };
    const ravi = { full_name: 'Ravi Iyer', email: 'ravi@example.com' };
    expect(await start([asha, ravi])).toEqual(['kn', null]);
    expect(
      await start([
        { ...asha, language: 'ml' },
        { ...ravi, language: 'gu' },
      ]),
    ).toEqual(['ml', 'gu']);
    // A blank runtime value never hides the template's.
    expect(await start([{ ...asha, language: ' ' }, ravi])).toEqual(['kn', null]);
    const wrong = await rest<any>(app, 'POST', '/esign/initialize-from-template', {
      token: owner.token,
      json: { template_id: template, sign_type: 'suresign', signers: [{ ...asha, language: 'de' }, ravi] },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual([
      { field: 'signers[0].language', problem: 'must be one of en, hi, bn, mr, te, ta, gu, kn, ml' },
    ]);

    // A template saved before the field existed reads as null and starts sessions without a language.
    await app.services.orm.em
      .fork()
      .getConnection()
      .execute(
        `update templates set signers = (select jsonb_agg(s - 'language') from jsonb_array_elements(signers) s) where id = ?`,
        [template],
      );
    const old = await rest<any>(app, 'GET', '/templates/details', { token: owner.token, query: { client_id: template } });
    expect(old.body.data.signers.map((signer: any) => signer.language)).toEqual([null, null]);
    expect(await start([asha, ravi])).toEqual([null, null]);
  });

  it('reaches the sessions of a bulk send: the template’s, else each row’s own (JSON and CSV), an unknown one failing its row', async () => {
    const saved = await rest<any>(app, 'POST', '/templates/save', {
      token: owner.token,
      json: { name: 'Loan', file_id: fileId, signers: [{ reason: 'Borrower', language: 'mr', elements: [signatureAt()] }] },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const template = saved.body.data.client_id;
    /** Each row's signer language (by position), or its failure's field once the bulk has run. */
    const outcome = async (bulkId: string, rowCount: number) => {
      let items: any[] = [];
      await until(
        async () => {
          const rows = await rest<any>(app, 'GET', '/esign/bulk-rows', { token: owner.token, query: { client_id: bulkId } });
          items = rows.body.data?.items ?? [];
          return items.length === rowCount && items.every((row) => row.status !== 'queued');
        },
        'the bulk’s rows',
        { timeoutMs: 60_000 },
      );
      return Promise.all(
        items.map(async (row) =>
          row.session_id ? (await details(row.session_id)).signers[0].language : row.error.errors[0].field,
        ),
      );
    };
    const sent = await rest<any>(app, 'POST', '/esign/bulk-send', {
      token: owner.token,
      json: {
        template_id: template,
        sign_type: 'suresign',
        rows: [
          { key: 'a', signers: [{ full_name: 'Sunita Patil', email: 'sunita@example.com' }] },
          { key: 'b', signers: [{ full_name: 'Selvi', email: 'selvi@example.com', language: 'ta' }] },
          { key: 'c', signers: [{ full_name: 'Jean', email: 'jean@example.com', language: 'fr' }] },
        ],
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(await outcome(sent.body.data.client_id, 3)).toEqual(['mr', 'ta', 'signers[0].language']);

    const csv = [
      'key,signer_1_full_name,signer_1_email,signer_1_language',
      'x,Arun,arun@example.com,TE',
      'y,Mary,mary@example.com,',
    ];
    const form = new FormData();
    form.append('template_id', template);
    form.append('options', JSON.stringify({ sign_type: 'suresign' }));
    form.append('file', new Blob([csv.join('\r\n')], { type: 'text/csv' }), 'rows.csv');
    const uploaded = await fetch(new URL('/api/v1/esign/bulk-send', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}` },
      body: form,
    });
    const body = (await uploaded.json()) as any;
    expect(uploaded.status, JSON.stringify(body)).toBe(200);
    expect(await outcome(body.data.client_id, 2)).toEqual(['te', 'mr']);
  });
});
