import { createHash, randomBytes } from 'node:crypto';
import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { composition } from '../../src/modules';

const { restRoutes } = composition;
import { issueAccessToken, revokeAccessToken } from '../../src/modules/users/access-tokens';
import type { RestRoute } from '../../src/platform/rest/route';
import { MeDocument } from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql } from '../helpers/clients';
import { makePng, MINIMAL_PDF } from '../helpers/fixtures';

const UNAUTHORIZED_ENVELOPE = { data: null, status_code: 401, message: 'unauthorized', success: false };
const ME_QUERY = 'query { me { user_id } }';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  status: number;
  body: any;
}

/** The sample query string of a known GET route; a route added later gets none (auth comes first anyway). */
function sampleQuery(route: RestRoute, fileId: string): Record<string, string> {
  if (route.path === '/files/details') return { client_id: fileId };
  if (route.path === '/files/list') return { page: '1', size: '1' };
  return {};
}

/** One call to a REST route with the Authorization header exactly as given (undefined: none). */
async function callRoute(
  app: TestApp,
  route: RestRoute,
  authorization: string | undefined,
  fileId = 'file_missing',
): Promise<Answer> {
  const url = new URL(`/api/v1${route.path}`, app.url);
  for (const [key, value] of Object.entries(sampleQuery(route, fileId))) url.searchParams.set(key, value);
  const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
  let body: FormData | string | undefined;
  if (route.multipart) {
    body = new FormData();
    const isAsset = route.path === '/files/upload-asset';
    // A PDF everywhere for the 401 cases; the owner's check sends what the route accepts.
    const bytes = isAsset && authorization?.startsWith('Bearer esk_') ? makePng(4, 4) : MINIMAL_PDF;
    const type = bytes === MINIMAL_PDF ? 'application/pdf' : 'image/png';
    body.append('file', new Blob([new Uint8Array(bytes)], { type }), type === 'application/pdf' ? 'minimal.pdf' : 'tiny.png');
  } else if (route.method !== 'GET') {
    headers['content-type'] = 'application/json';
    body = '{}';
  }
  const response = await fetch(url, { method: route.method, headers, body });
  return { status: response.status, body: await response.json() };
}

async function graphqlPost(app: TestApp, authorization: string | undefined, query = ME_QUERY): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  const response = await fetch(new URL('/graphql', app.url), { method: 'POST', headers, body: JSON.stringify({ query }) });
  return { status: response.status, body: await response.json() };
}

async function graphqlGet(app: TestApp, authorization: string | undefined, query = ME_QUERY): Promise<Answer> {
  const url = new URL('/graphql', app.url);
  url.searchParams.set('query', query);
  // Apollo's CSRF prevention wants a preflight-forcing header on GET.
  const headers: Record<string, string> = { 'apollo-require-preflight': 'true' };
  if (authorization !== undefined) headers.authorization = authorization;
  const response = await fetch(url, { headers });
  return { status: response.status, body: await response.json() };
}

function expectGraphQLUnauthorized(answer: Answer) {
  expect(answer.status).toBe(401);
  expect(answer.body.data ?? null).toBeNull();
  expect(answer.body.errors?.[0]?.message).toBe('unauthorized');
  expect(answer.body.errors?.[0]?.extensions?.code).toBe('unauthorized');
}

/** Speaks graphql-transport-ws by hand: opens, sends connection_init with the payload, reports how it ended. */
function rawWsHandshake(
  app: TestApp,
  payload: Record<string, unknown> | undefined,
): Promise<{ code: number; reason: string; acked: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${app.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    let acked = false;
    socket.on('open', () =>
      socket.send(JSON.stringify(payload === undefined ? { type: 'connection_init' } : { type: 'connection_init', payload })),
    );
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string };
      if (message.type === 'connection_ack') {
        acked = true;
        socket.close(1000);
      }
    });
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString(), acked }));
    socket.on('error', reject);
  });
}

describe('access tokens', () => {
  let app: TestApp;
  let owner: TestUser;
  let expired: string;
  let revoked: string;
  let unknown: string;
  let ownerFileId = 'file_missing';
  /** Every raw token this file has sent or created, to look for in the logs and in the table. */
  const usedTokens = new Set<string>();
  const clients: Client[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser('owner@example.com');
    usedTokens.add(owner.token);
    const shortLived = await issueAccessToken(app.services.orm.em.fork(), owner.user_id, { expiresInSeconds: 1 });
    expired = shortLived.token;
    const toRevoke = await issueAccessToken(app.services.orm.em.fork(), owner.user_id);
    revoked = toRevoke.token;
    await revokeAccessToken(app.services.orm.em.fork(), toRevoke.token_id);
    unknown = `esk_${randomBytes(32).toString('base64url')}`;
    for (const token of [expired, revoked, unknown]) usedTokens.add(token);
    // Wait past the expiry of the one-second token (measured from what was stored, not asserted).
    await sleep(Math.max(0, Date.parse(shortLived.expires_at!) - Date.now()) + 200);
  });

  afterAll(async () => {
    for (const client of clients) await client.dispose();
    await app?.close();
  });

  /** The refused credentials: the Authorization header to send, or undefined for none. */
  const refused: [string, () => string | undefined][] = [
    ['no Authorization header', () => undefined],
    ['"Bearer" with no token', () => 'Bearer'],
    ['"Bearer " with only spaces', () => 'Bearer    '],
    ['a non-bearer scheme', () => 'Basic abc'],
    ['a non-bearer scheme carrying a valid token', () => `Basic ${owner.token}`],
    ['a valid token without its esk_ prefix', () => `Bearer ${owner.token.slice('esk_'.length)}`],
    ['a token that is not esk_ at all', () => 'Bearer abc.def.ghi'],
    ['two tokens', () => `Bearer ${owner.token} ${owner.token}`],
    ['an unknown esk_ token', () => `Bearer ${unknown}`],
    ['an expired token', () => `Bearer ${expired}`],
    ['a revoked token', () => `Bearer ${revoked}`],
  ];

  describe.each(restRoutes.map((route) => [`${route.method} /api/v1${route.path}`, route] as const))('%s', (_name, route) => {
    it.each(refused)('answers %s with the 401 envelope', async (_label, authorization) => {
      const answer = await callRoute(app, route, authorization());
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(UNAUTHORIZED_ENVELOPE);
    });
  });

  describe('POST /graphql', () => {
    it.each(refused)('answers %s with 401 unauthorized', async (_label, authorization) => {
      expectGraphQLUnauthorized(await graphqlPost(app, authorization()));
    });
  });

  describe('GET /graphql?query=...', () => {
    it.each(refused)('answers %s with 401 unauthorized', async (_label, authorization) => {
      expectGraphQLUnauthorized(await graphqlGet(app, authorization()));
    });
  });

  it('lets the owner in on every REST route with a valid token', async () => {
    // Upload first so that details has a file of the owner's to show.
    const ordered = [...restRoutes].sort((a, b) => Number(!!b.multipart) - Number(!!a.multipart));
    for (const route of ordered) {
      const answer = await callRoute(app, route, `Bearer ${owner.token}`, ownerFileId);
      expect(answer.status, `${route.method} ${route.path}: ${JSON.stringify(answer.body)}`).not.toBe(401);
      expect(answer.body.message).not.toBe('unauthorized');
      if (route.path === '/files/upload-pdf') ownerFileId = answer.body.data.client_id;
    }
    // The routes this file knows answer 200 with the envelope.
    for (const route of restRoutes.filter((r) =>
      ['/files/upload-pdf', '/files/upload-asset', '/files/details', '/files/list'].includes(r.path),
    )) {
      const answer = await callRoute(app, route, `Bearer ${owner.token}`, ownerFileId);
      expect(answer.status, `${route.method} ${route.path}: ${JSON.stringify(answer.body)}`).toBe(200);
      expect(answer.body).toMatchObject({ status_code: 200, success: true });
    }
  });

  it('lets the owner in on /graphql (POST and GET) with a valid token', async () => {
    const me = await gql(app, owner.token, MeDocument);
    expect(me.status).toBe(200);
    expect(me.errors).toBeUndefined();
    expect(me.data?.me).toEqual({ user_id: owner.user_id, email: 'owner@example.com', token_id: owner.token_id });

    const viaGet = await graphqlGet(app, `Bearer ${owner.token}`);
    expect(viaGet.status).toBe(200);
    expect(viaGet.body).toEqual({ data: { me: { user_id: owner.user_id } } });

    // The scheme is case-insensitive (RFC 7235).
    const lower = await graphqlPost(app, `bearer ${owner.token}`);
    expect(lower.status).toBe(200);
    expect(lower.body.data.me.user_id).toBe(owner.user_id);
  });

  it('stops accepting a token right after it is revoked', async () => {
    const issued = await issueAccessToken(app.services.orm.em.fork(), owner.user_id, { label: 'revoked in a test' });
    usedTokens.add(issued.token);
    const list = restRoutes.find((route) => route.path === '/files/list')!;

    const before = await gql(app, issued.token, MeDocument);
    expect(before.data?.me).toMatchObject({ user_id: owner.user_id, token_id: issued.token_id });
    expect((await callRoute(app, list, `Bearer ${issued.token}`)).status).toBe(200);
    expect((await rawWsHandshake(app, { authorization: `Bearer ${issued.token}` })).acked).toBe(true);

    await revokeAccessToken(app.services.orm.em.fork(), issued.token_id);

    expectGraphQLUnauthorized(await graphqlPost(app, `Bearer ${issued.token}`));
    expectGraphQLUnauthorized(await graphqlGet(app, `Bearer ${issued.token}`));
    const after = await callRoute(app, list, `Bearer ${issued.token}`);
    expect(after.status).toBe(401);
    expect(after.body).toEqual(UNAUTHORIZED_ENVELOPE);
    expect(await rawWsHandshake(app, { authorization: `Bearer ${issued.token}` })).toMatchObject({ code: 4401, acked: false });
    // The other tokens of the user are untouched.
    expect((await gql(app, owner.token, MeDocument)).data?.me?.token_id).toBe(owner.token_id);
  });

  it('stores tokens only as a SHA-256 hash', async () => {
    const db = new pg.Client({ connectionString: app.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<Record<string, unknown>>('select * from access_tokens');
      expect(rows.length).toBeGreaterThanOrEqual(4);
      const tokens = [...usedTokens].filter((token) => token !== unknown);
      for (const row of rows) {
        for (const value of Object.values(row)) {
          const text = value instanceof Date ? value.toISOString() : String(value);
          for (const token of tokens) {
            expect(text).not.toBe(token);
            expect(text).not.toContain(token.slice('esk_'.length));
          }
        }
      }
      const hashes = rows.map((row) => row.token_hash);
      for (const token of tokens) expect(hashes).toContain(createHash('sha256').update(token).digest('hex'));
      const ownerRow = rows.find((row) => row.id === owner.token_id)!;
      expect(ownerRow.token_hash).toBe(createHash('sha256').update(owner.token, 'utf8').digest('hex'));
      expect(ownerRow.token_hash).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await db.end();
    }
  });

  describe('graphql-ws', () => {
    const wsUrl = () => `${app.url.replace('http', 'ws')}/graphql`;

    function newClient(connectionParams?: Record<string, unknown>, closed?: (event: unknown) => void): Client {
      const client = createClient({
        url: wsUrl(),
        webSocketImpl: WebSocket,
        connectionParams,
        retryAttempts: 0,
        lazy: true,
        on: closed ? { closed } : undefined,
      });
      clients.push(client);
      return client;
    }

    function runOnce(client: Client, query: string): Promise<{ data?: any; error?: unknown }> {
      return new Promise((resolve) => {
        let result: { data?: any } = {};
        client.subscribe(
          { query },
          {
            next: (value) => {
              result = { data: value.data };
            },
            error: (error) => resolve({ error }),
            complete: () => resolve(result),
          },
        );
      });
    }

    it.each([
      ['no connection params', undefined],
      ['empty connection params', {}],
      ['a bad token', { authorization: 'Bearer esk_not-a-real-token' }],
      ['a token without esk_', { authorization: 'Bearer abcdef' }],
      ['a non-bearer scheme', { authorization: 'Basic abc' }],
      ['a non-string authorization', { authorization: 42 }],
    ] as const)('closes a graphql-ws client connecting with %s with 4401', async (_label, params) => {
      const closes: { code: number; reason: string }[] = [];
      const client = newClient(params as Record<string, unknown> | undefined, (event) =>
        closes.push(event as { code: number; reason: string }),
      );
      const outcome = await runOnce(client, ME_QUERY);
      expect(outcome.data).toBeUndefined();
      expect((outcome.error as { code?: number })?.code).toBe(4401);
      expect(closes.map((event) => event.code)).toEqual([4401]);
      await client.dispose();
    });

    it.each([
      ['no payload', () => undefined],
      ['an empty payload', () => ({})],
      ['an unknown token', () => ({ authorization: `Bearer ${unknown}` })],
      ['an expired token', () => ({ authorization: `Bearer ${expired}` })],
      ['a revoked token', () => ({ authorization: `Bearer ${revoked}` })],
      ['the token without Bearer', () => ({ authorization: owner.token })],
    ])('closes a raw graphql-transport-ws connection_init with %s with 4401', async (_label, payload) => {
      const outcome = await rawWsHandshake(app, payload());
      expect(outcome).toEqual({ code: 4401, reason: 'unauthorized', acked: false });
    });

    it('answers an operation over a connection authenticated with the owner token', async () => {
      const closes: number[] = [];
      const client = newClient({ authorization: `Bearer ${owner.token}` }, (event) =>
        closes.push((event as { code: number }).code),
      );
      const outcome = await runOnce(client, ME_QUERY);
      expect(outcome.error).toBeUndefined();
      expect(outcome.data).toEqual({ me: { user_id: owner.user_id } });
      const typed = await runOnce(client, 'query { me { user_id email token_id } }');
      expect(typed.data).toEqual({ me: { user_id: owner.user_id, email: 'owner@example.com', token_id: owner.token_id } });
      await client.dispose();
      expect(closes).not.toContain(4401);

      // The capitalised key is accepted too (the server reads both).
      expect(await rawWsHandshake(app, { Authorization: `Bearer ${owner.token}` })).toMatchObject({ acked: true, code: 1000 });
    });
  });

  it('never writes a token to the logs', async () => {
    expect(app.logs.length).toBeGreaterThan(0);
    const logged = JSON.stringify(app.logs);
    for (const token of usedTokens) {
      expect(logged).not.toContain(token);
      expect(logged).not.toContain(token.slice('esk_'.length));
    }
  });
});
