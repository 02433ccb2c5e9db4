/**
 * Automatic persisted queries (issue 29) as Apollo clients run them, over POST and over GET: the hash alone, the
 * signal the client recognises (`PERSISTED_QUERY_NOT_FOUND`, message `PersistedQueryNotFound`), the query with its
 * hash (checked against it), then the hash alone answers, through the compiled executor too.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { createSession, sessionBody, uploadPdf } from '../helpers/factories';

interface Answer {
  status: number;
  body: any;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('automatic persisted queries', () => {
  let app: TestApp;
  let owner: TestUser;
  let sessionId: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    sessionId = (await createSession(app, owner.token, sessionBody(await uploadPdf(app, owner.token)))).client_id;
  });
  afterAll(async () => app?.close());

  /** What Apollo Client's HttpLink sends: JSON, with `content-type: application/json` on GET as on POST. */
  const headers = () => ({ authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' });

  async function post(body: Record<string, unknown>): Promise<Answer> {
    const response = await fetch(new URL('/graphql', app.url), {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  async function get(params: Record<string, unknown>): Promise<Answer> {
    const url = new URL('/graphql', app.url);
    for (const [key, value] of Object.entries(params))
      url.searchParams.set(key, typeof value === 'string' ? value : JSON.stringify(value));
    const response = await fetch(url, { headers: headers() });
    return { status: response.status, body: await response.json() };
  }

  const notFound = {
    errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', status: 200 } }],
  };

  for (const [name, send] of [
    ['POST', (body: Record<string, unknown>) => post(body)],
    ['GET', (body: Record<string, unknown>) => get(body)],
  ] as const) {
    it(`hash only -> PERSISTED_QUERY_NOT_FOUND -> query and hash -> hash only, over ${name}`, async () => {
      // A query of its own per transport, so that neither finds the other's registration.
      const query = `query Session${name}($client_id: String!) { esignSession(client_id: $client_id) { client_id status } }`;
      const persistedQuery = { version: 1, sha256Hash: sha256(query) };
      const variables = { client_id: sessionId };
      const operationName = `Session${name}`;
      const expected = { data: { esignSession: { client_id: sessionId, status: 'pending' } } };

      const first = await send({ operationName, variables, extensions: { persistedQuery } });
      expect(first.status).toBe(200);
      expect(first.body).toEqual(notFound);
      const registering = await send({ operationName, variables, query, extensions: { persistedQuery } });
      expect(registering.status, JSON.stringify(registering.body)).toBe(200);
      expect(registering.body).toEqual(expected);
      // Hash only now: the first run of the registered text, then compiled runs.
      for (let run = 0; run < 3; run++) {
        const again = await send({ operationName, variables, extensions: { persistedQuery } });
        expect(again.status).toBe(200);
        expect(again.body).toEqual(expected);
      }
    });
  }

  it('refuses a query whose hash is not its own, and registers nothing under that hash', async () => {
    const query = '{ me { user_id } }';
    const wrong = { version: 1, sha256Hash: sha256('{ me { email } }') };
    const mismatch = await post({ query, extensions: { persistedQuery: wrong } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errors[0].extensions).toMatchObject({ code: 'bad_request', status: 400 });
    expect(await post({ extensions: { persistedQuery: wrong } })).toEqual({ status: 200, body: notFound });
  });

  it('keeps refusing mutations over GET, registered or not', async () => {
    const mutation = `mutation { cancelEsign(client_id: "${sessionId}") { status } }`;
    const persistedQuery = { version: 1, sha256Hash: sha256(mutation) };
    const answer = await get({ query: mutation, extensions: { persistedQuery } });
    expect(answer.status).toBe(405);
    const details = await post({ query: `{ esignSession(client_id: "${sessionId}") { status } }` });
    expect(details.body.data.esignSession.status).toBe('pending');
  });
});
