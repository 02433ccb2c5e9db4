import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findAppError } from '../../src/platform/errors';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { MINIMAL_PDF } from '../helpers/fixtures';

/**
 * PostgreSQL refuses NUL in text and jsonb; before this check such a byte in an id or a string answered
 * `500 internal_error` (with the SQL in the log) on ten routes. Now both faces refuse it as `400 bad_request`
 * naming the field, before anything runs, and the service goes on answering.
 */
describe('NUL and control characters in ids, codes and names', () => {
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token, MINIMAL_PDF);
  });
  afterAll(() => app.close());

  async function graphql(query: string, variables?: Record<string, unknown>) {
    const response = await fetch(new URL('/graphql', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  const GET_ROUTES: [string, string][] = [
    ['/files/details', 'client_id'],
    ['/esign/details', 'client_id'],
    ['/esign/download-pdf', 'client_id'],
    ['/esign/download-certificate', 'client_id'],
    ['/esign/verify', 'client_id'],
    ['/esign/audit', 'client_id'],
    ['/templates/details', 'client_id'],
    ['/stamps/order-status', 'client_id'],
    ['/stamps/download-pdf', 'client_id'],
    ['/stamps/articles', 'state_code'],
    ['/esign/list', 'folder'],
    ['/files/list', 'kind'],
  ];

  it.each(GET_ROUTES)('GET %s with a NUL or control character in %s is 400 bad_request naming it', async (path, parameter) => {
    for (const value of ['\u0000', 'esign_\u0000abc', 'x\u0007', 'tab\there']) {
      const response = await rest(app, 'GET', path, { token: owner.token, query: { [parameter]: value, page: 1, size: 10 } });
      expect(response.status, `${path} ${JSON.stringify(value)}: ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body).toMatchObject({ message: 'bad_request', success: false, status_code: 400 });
      expect(response.body.errors).toContainEqual({ field: parameter, problem: 'must not contain control characters' });
    }
  });

  it('JSON bodies: a NUL anywhere, nested fields named by their path, on POST, PUT and DELETE routes', async () => {
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['POST', '/stamps/create-order', { state_code: '\u0000', article_id: 'MH-5', quantity: 1, mock: true }, 'state_code'],
      [
        'POST',
        '/esign/initialize-esign',
        sessionBody(fileId, { signers: [signerInput({ full_name: 'Asha\u0000Rao' })] }),
        'signers[0].full_name',
      ],
      ['POST', '/esign/cancel', { client_id: 'esign_x', reason: 'no\u0000thanks' }, 'reason'],
      ['DELETE', '/templates/delete', { client_id: '\u0000' }, 'client_id'],
    ];
    for (const [method, path, body, field] of cases) {
      const response =
        method === 'DELETE'
          ? await rest(app, method, path, { token: owner.token, query: body as Record<string, string> })
          : await rest(app, method, path, { token: owner.token, json: body });
      expect(response.status, `${path}: ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.message).toBe('bad_request');
      expect(response.body.errors?.map((error) => error.field)).toContain(field);
    }
    // Nothing was created by the refused initialization.
    const sessions = await rest<{ items: unknown[] }>(app, 'GET', '/esign/list', { token: owner.token });
    expect(sessions.body.data!.items).toHaveLength(0);
  });

  it('free text keeps its tabs and line breaks; only NUL and the other controls are refused there', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId, { signers: [signerInput()] }));
    const cancelled = await rest<{ cancel_reason: string }>(app, 'POST', '/esign/cancel', {
      token: owner.token,
      json: { client_id: session.client_id, reason: 'Wrong party.\n\tSee the new session.' },
    });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body.data!.cancel_reason).toBe('Wrong party.\n\tSee the new session.');
  });

  it('GraphQL: the same refusal for a literal and for a variable, named by the argument, nothing executed', async () => {
    const literal = await graphql('{ file(client_id: "file_\\u0000") { client_id } }');
    expect(literal.body.errors[0]).toMatchObject({
      message: 'bad_request',
      extensions: { code: 'bad_request', errors: [{ field: 'client_id', problem: 'must not contain control characters' }] },
    });
    expect(literal.body.data ?? null).toBeNull();

    const variable = await graphql(
      'mutation Order($input: String!) { createStampOrder(state_code: $input, article_id: "MH-5", quantity: 1, mock: true) { client_id } }',
      { input: '\u0000' },
    );
    expect(variable.body.errors[0].extensions).toMatchObject({
      code: 'bad_request',
      errors: [{ field: 'state_code', problem: 'must not contain control characters' }],
    });

    const nested = await graphql(
      `mutation Init($signers: [SignerInput!]!) { initializeEsign(file_id: "${fileId}", signers: $signers) { client_id } }`,
      { signers: [signerInput({ full_name: 'Asha\u0000Rao' })] },
    );
    expect(nested.body.errors[0].extensions.errors).toContainEqual({
      field: 'signers[0].full_name',
      problem: 'must not contain control characters',
    });
  });

  it('the signer API refuses it too, and the service still answers afterwards', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId, { signers: [signerInput()] }));
    const response = await fetch(new URL('/signer-api/sign', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${session.signers[0].token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ consent: true, note: 'a\u0000b' }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ message: 'bad_request', errors: [{ field: 'note' }] });
    expect((await fetch(new URL('/healthz', app.url))).status).toBe(200);
    expect(app.logs.filter((line) => line.level === 50 && /internal|unexpected/i.test(String(line.msg)))).toEqual([]);
  });

  it('a database error answers what its SQLSTATE means (22 bad_request, 23 conflict, 40/08/53/57 retry), never a 500', () => {
    const pgError = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
      code: '22021',
      severity: 'ERROR',
    });
    const wrapped = Object.assign(new Error('wrapped by the ORM'), { cause: pgError });
    expect(findAppError(wrapped)).toMatchObject({ code: 'bad_request', status: 400 });
    const duplicate = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
      severity: 'ERROR',
    });
    expect(findAppError(duplicate)).toMatchObject({ code: 'conflict', status: 409 });
    const connectionLost = Object.assign(new Error('terminating connection'), { sqlState: '57P01' });
    expect(findAppError(connectionLost)).toMatchObject({ code: 'service_unavailable', status: 503 });
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01', severity: 'ERROR' });
    expect(findAppError(deadlock)).toMatchObject({ code: 'service_unavailable', status: 503 });
    // A bug of ours (undefined column, syntax) stays a fault: logged in full, internal_error to the client.
    expect(findAppError(Object.assign(new Error('column does not exist'), { code: '42703', severity: 'ERROR' }))).toBeUndefined();
    expect(findAppError(new TypeError('x is undefined'))).toBeUndefined();
  });
});
