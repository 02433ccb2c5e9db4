import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { signatureAt, uploadPdf } from '../helpers/factories';
import { until } from '../helpers/until';

/**
 * Bulk send: a template to many recipients, one session per row, made by a job. JSON and CSV rows, bad rows among
 * good ones (each failed with what initialize-from-template answers, naming the field), a duplicate key, the rows'
 * CSV, cancel, and another user's bulk.
 */
describe('bulk send', () => {
  let app: TestApp;
  let owner: TestUser;
  let template: { client_id: string; signers: { elements: { field_id: string; type: string }[] }[] };
  let employeeField: string;

  beforeAll(async () => {
    // One invite a second: the pacing shows in the delivery jobs' start times.
    app = await startTestApp({ env: { BULK_INVITES_PER_SECOND: '1' } });
    owner = await app.createUser();
    const fileId = await uploadPdf(app, owner.token);
    const saved = await rest<any>(app, 'POST', '/templates/save', {
      token: owner.token,
      json: {
        name: 'Offer letter',
        file_id: fileId,
        signers: [
          {
            reason: 'Employee',
            elements: [
              signatureAt(0),
              { x: 72, y: 40, page: 0, alignment: 'left', type: 'text', label: 'Employee number', max_length: 10 },
            ],
          },
          { reason: 'HR', elements: [signatureAt(1)] },
        ],
      },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    template = saved.body.data;
    employeeField = template.signers[0]!.elements.find((element) => element.type === 'text')!.field_id;
  });
  afterAll(async () => app.close());

  const hr = { full_name: 'Meera HR', email: 'hr@example.com' };
  const joiner = (index: number) => ({ full_name: `Joiner ${index}`, email: `joiner${index}@example.com` });
  const status = async (clientId: string, token = owner.token) =>
    rest<any>(app, 'GET', '/esign/bulk-status', { token, query: { client_id: clientId } });
  const finished = (clientId: string) =>
    until(async () => ['completed', 'cancelled'].includes((await status(clientId)).body.data?.status), `bulk ${clientId}`, {
      timeoutMs: 120_000,
    });
  const rowsOf = async (clientId: string, query: Record<string, unknown> = {}) =>
    (await rest<any>(app, 'GET', '/esign/bulk-rows', { token: owner.token, query: { client_id: clientId, size: 100, ...query } }))
      .body.data;
  const details = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data;

  it('JSON rows: each good row a session as initialize-from-template makes it; bad rows and a repeated key fail alone', async () => {
    const sent = await rest<any>(app, 'POST', '/esign/bulk-send', {
      token: owner.token,
      json: {
        template_id: template.client_id,
        sign_type: 'suresign',
        notification: { invite: true },
        rows: [
          { key: 'emp-1', signers: [joiner(1), hr], element_values: { [employeeField]: 'E-1' } },
          { key: 'emp-2', signers: [{ full_name: 'No contact' }, hr] },
          { key: 'emp-3', signers: [joiner(3), hr], element_values: { [employeeField]: 'far too long for ten' } },
          { key: 'emp-1', signers: [joiner(4), hr] },
          { signers: [joiner(5), hr], element_values: { [employeeField]: 'E-5' } },
          { key: 'emp-6', signers: [joiner(6)] },
        ],
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const bulk = sent.body.data;
    expect(bulk).toMatchObject({ client_id: expect.stringMatching(/^bulk_/), template_id: template.client_id, row_count: 6 });
    expect(['queued', 'running', 'completed']).toContain(bulk.status);
    await finished(bulk.client_id);

    const read = (await status(bulk.client_id)).body.data;
    expect(read).toMatchObject({
      status: 'completed',
      rows: { queued: 0, created: 2, failed: 4, skipped: 0 },
      sessions: { pending: 2, completed: 0 },
    });
    const rows = (await rowsOf(bulk.client_id)).items;
    expect(rows.map((row: any) => [row.position, row.key, row.status])).toEqual([
      [0, 'emp-1', 'created'],
      [1, 'emp-2', 'failed'],
      [2, 'emp-3', 'failed'],
      [3, 'emp-1', 'failed'],
      [4, null, 'created'],
      [5, 'emp-6', 'failed'],
    ]);
    expect(rows[1].error).toMatchObject({ code: 'bad_request', errors: [{ field: 'signers[0].email' }] });
    expect(rows[2].error.errors[0].field).toBe(`signers[0].element_values.${employeeField}`);
    expect(rows[3].error).toMatchObject({ code: 'duplicate_key', errors: [{ field: 'key' }] });
    expect(rows[5].error.code).toBe('signer_count_mismatch');

    // No session beside the rows': one per created row.
    const sessions = await rest<any>(app, 'GET', '/esign/list', { token: owner.token, query: { size: 100 } });
    expect(sessions.body.data.items.map((item: any) => item.client_id).sort()).toEqual(
      rows.flatMap((row: any) => (row.session_id ? [row.session_id] : [])).sort(),
    );
    // A row's session is what initialize-from-template makes: the template, the contacts, the value.
    const session = await details(rows[0].session_id);
    expect(session).toMatchObject({ template_id: template.client_id, status: 'pending', sign_type: 'suresign' });
    expect(session.signers.map((signer: any) => signer.full_name)).toEqual(['Joiner 1', 'Meera HR']);
    expect(session.signers[0].elements.find((element: any) => element.field_id === employeeField).value).toBe('E-1');

    // Invites paced: row n's first signer's invite is not sent before n seconds after the bulk was sent.
    const [{ created_at: sentAt }] = await app.services.orm.em
      .fork()
      .getConnection()
      .execute<{ created_at: Date }[]>('select created_at from bulks where id = ?', [bulk.client_id]);
    for (const row of [rows[0], rows[4]]) {
      const [job] = await app.services.orm.em
        .fork()
        .getConnection()
        .execute<{ start_after: Date }[]>(
          `select j.start_after from pgboss.job j join notifications n on n.id = j.data->>'notification_id'
            where j.name = 'notifications.deliver' and n.session_id = ? and n.kind = 'invite'`,
          [row.session_id],
        );
      expect(new Date(job!.start_after).getTime()).toBeGreaterThanOrEqual(new Date(sentAt).getTime() + row.position * 1000 - 5);
    }

    // Only failed rows, and the whole bulk as CSV with what each row became.
    expect((await rowsOf(bulk.client_id, { status: 'failed' })).items.map((row: any) => row.position)).toEqual([1, 2, 3, 5]);
    const csv = await fetch(new URL(`/api/v1/esign/bulk-rows?client_id=${bulk.client_id}&format=csv`, app.url), {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe('position,key,status,session_id,session_status,error_code,error_message,error_fields');
    expect(lines).toHaveLength(7);
    expect(lines[1]).toBe(`0,emp-1,created,${rows[0].session_id},pending,,,`);
    expect(lines[4]).toMatch(/^3,emp-1,failed,,,duplicate_key,duplicate_key,key: the key of row 0 of this bulk$/);

    // The list shows it.
    const list = await rest<any>(app, 'GET', '/esign/bulk-list', { token: owner.token });
    expect(list.body.data.items.map((item: any) => item.client_id)).toContain(bulk.client_id);
  });

  it('a CSV upload: columns by signer, the field’s label and the key; streamed into rows', async () => {
    const csv = [
      'key,signer_1_full_name,signer_1_email,signer_2_full_name,signer_2_email,Employee number',
      ...Array.from(
        { length: 30 },
        (_, index) => `csv-${index},Joiner ${index},j${index}@example.com,Meera HR,hr@example.com,E-${index}`,
      ),
      'csv-bad,,nobody@example.com,Meera HR,hr@example.com,E-X',
    ].join('\r\n');
    const form = new FormData();
    form.append('template_id', template.client_id);
    form.append('options', JSON.stringify({ sign_type: 'suresign', folder: 'joiners' }));
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
    const response = await fetch(new URL('/api/v1/esign/bulk-send', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}` },
      body: form,
    });
    const body = (await response.json()) as any;
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.data).toMatchObject({ source: 'csv', row_count: 31 });
    await finished(body.data.client_id);
    expect((await status(body.data.client_id)).body.data.rows).toMatchObject({ created: 30, failed: 1 });
    const rows = (await rowsOf(body.data.client_id, { status: 'failed' })).items;
    expect(rows).toMatchObject([{ key: 'csv-bad', error: { errors: [{ field: 'signers[0].full_name' }] } }]);
    const first = (await rowsOf(body.data.client_id, { size: 1 })).items[0];
    const session = await details(first.session_id);
    expect(session.folder).toBe('joiners');
    expect(session.signers[0].elements.find((element: any) => element.field_id === employeeField).value).toBe('E-0');

    // The same upload through GraphQL (the multipart request spec): bulkSendCsv.
    const operations = {
      query: `mutation ($file: Upload!, $template: String, $options: JSONObject) {
        bulkSendCsv(template_id: $template, file: $file, options: $options) { client_id source row_count }
      }`,
      variables: { file: null, template: template.client_id, options: { sign_type: 'suresign' } },
    };
    const multipart = new FormData();
    multipart.append('operations', JSON.stringify(operations));
    multipart.append('map', JSON.stringify({ 0: ['variables.file'] }));
    multipart.append('0', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
    const graph = await fetch(new URL('/graphql', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'apollo-require-preflight': 'true' },
      body: multipart,
    });
    const graphBody = (await graph.json()) as any;
    expect(graphBody.errors).toBeUndefined();
    expect(graphBody.data.bulkSendCsv).toMatchObject({ source: 'csv', row_count: 31 });
    await finished(graphBody.data.bulkSendCsv.client_id);
    expect((await status(graphBody.data.bulkSendCsv.client_id)).body.data.rows).toMatchObject({ created: 30, failed: 1 });

    // An unknown column refuses the upload, naming it; nothing is kept.
    const bad = new FormData();
    bad.append('template_id', template.client_id);
    bad.append('file', new Blob(['key,Favourite colour\r\nx,blue\r\n'], { type: 'text/csv' }), 'rows.csv');
    const refused = await fetch(new URL('/api/v1/esign/bulk-send', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}` },
      body: bad,
    });
    const refusal = (await refused.json()) as any;
    expect(refused.status).toBe(400);
    expect(refusal.errors[0]).toMatchObject({ field: 'file', problem: expect.stringContaining('Favourite colour') });
  });

  it('cancel: rows not yet made are skipped and the sessions made are cancelled', async () => {
    const sent = await rest<any>(app, 'POST', '/esign/bulk-send', {
      token: owner.token,
      json: {
        template_id: template.client_id,
        sign_type: 'suresign',
        rows: Array.from({ length: 150 }, (_, index) => ({ signers: [joiner(index), hr] })),
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const clientId = sent.body.data.client_id;
    await until(async () => (await status(clientId)).body.data.rows.created > 0, 'the first rows made');
    const cancelled = await rest<any>(app, 'POST', '/esign/bulk-cancel', { token: owner.token, json: { client_id: clientId } });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body.data.status).toBe('cancelled');
    const rows = cancelled.body.data.rows;
    expect(rows.queued).toBe(0);
    expect(rows.created + rows.skipped).toBe(150);
    await until(async () => (await status(clientId)).body.data.sessions.pending === 0, 'every session of the bulk cancelled', {
      timeoutMs: 120_000,
    });
    expect((await status(clientId)).body.data.sessions.cancelled).toBe(rows.created);
    const again = await rest<any>(app, 'POST', '/esign/bulk-cancel', { token: owner.token, json: { client_id: clientId } });
    expect(again.status).toBe(409);
  });

  it('another user’s bulk is 404 everywhere; their list is empty', async () => {
    const sent = await rest<any>(app, 'POST', '/esign/bulk-send', {
      token: owner.token,
      json: { template_id: template.client_id, sign_type: 'suresign', rows: [{ signers: [joiner(1), hr] }] },
    });
    const clientId = sent.body.data.client_id;
    const other = await app.createUser();
    expect((await status(clientId, other.token)).status).toBe(404);
    expect((await rest<any>(app, 'GET', '/esign/bulk-rows', { token: other.token, query: { client_id: clientId } })).status).toBe(
      404,
    );
    expect(
      (await rest<any>(app, 'POST', '/esign/bulk-cancel', { token: other.token, json: { client_id: clientId } })).status,
    ).toBe(404);
    expect((await rest<any>(app, 'GET', '/esign/bulk-list', { token: other.token })).body.data.items).toEqual([]);
    // Sending from someone else's template is the template's 404.
    const foreign = await rest<any>(app, 'POST', '/esign/bulk-send', {
      token: other.token,
      json: { template_id: template.client_id, rows: [{ signers: [joiner(1), hr] }] },
    });
    expect(foreign.status).toBe(404);
    const form = new FormData();
    form.append('template_id', template.client_id);
    form.append('file', new Blob(['key\r\nx\r\n'], { type: 'text/csv' }), 'rows.csv');
    const foreignCsv = await fetch(new URL('/api/v1/esign/bulk-send', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${other.token}` },
      body: form,
    });
    expect(foreignCsv.status).toBe(404);
    expect((await rest<any>(app, 'GET', '/esign/bulk-list', { token: other.token })).body.data.items).toEqual([]);
    await finished(clientId);
  });
});
