import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, createStampOrder, sessionBody, uploadPdf } from '../helpers/factories';
import { until } from '../helpers/until';

/**
 * Access tokens an account manages itself (issue 34): made, listed, rotated and revoked over REST and GraphQL, each
 * with scopes that decide which operations it may run (on REST, GraphQL over HTTP and graphql-ws alike), and browser
 * tokens that read and follow one session or stamp order and nothing else.
 */
describe('access tokens', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let fileId: string;
  const sockets: Client[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    other = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => {
    await Promise.all(sockets.map((socket) => socket.dispose()));
    await app?.close();
  });

  const make = async (json: Record<string, unknown>, token = owner.token) =>
    rest<any>(app, 'POST', '/tokens/create', { token, json });
  const graphql = async (token: string, query: string, variables: Record<string, unknown> = {}) => {
    const response = await fetch(new URL('/graphql', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  /** One operation over graphql-ws: every result until it ends (or `until` says enough). */
  const overWs = (token: string, query: string, variables: Record<string, unknown> = {}) => {
    const socket = createClient({
      url: `${app.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
    });
    sockets.push(socket);
    const seen = { results: [] as any[], errors: [] as any[], done: false };
    socket.subscribe(
      { query, variables },
      {
        next: (result) => seen.results.push(result),
        error: (error) => {
          seen.errors.push(...(Array.isArray(error) ? error : [error]));
          seen.done = true;
        },
        complete: () => {
          seen.done = true;
        },
      },
    );
    return seen;
  };

  it('are made with a name, scopes and an expiry; the secret is answered once and never listed', async () => {
    const made = await make({ name: 'CRM read', scopes: ['read'], expires_in: 3600 });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.data).toMatchObject({
      client_id: expect.stringMatching(/^tok_/),
      token: expect.stringMatching(/^esk_/),
      name: 'CRM read',
      kind: 'user',
      scopes: ['read'],
      last_used_at: null,
      revoked_at: null,
    });
    const expiresAt = Date.parse(made.body.data.expires_at);
    expect(expiresAt - Date.parse(made.body.data.created_at)).toBeGreaterThanOrEqual(3_599_000);

    const listed = await rest<any>(app, 'GET', '/tokens/list', { token: owner.token });
    expect(listed.status).toBe(200);
    const mine = listed.body.data.items.find((item: any) => item.client_id === made.body.data.client_id);
    expect(mine).toMatchObject({ name: 'CRM read', scopes: ['read'] });
    expect(JSON.stringify(listed.body)).not.toContain(made.body.data.token);
    // The CLI's token of the account is listed too, with everything it may do.
    expect(listed.body.data.items.find((item: any) => item.client_id === owner.token_id)).toMatchObject({ scopes: ['all'] });

    // Its use is recorded, to the minute.
    expect((await rest<any>(app, 'GET', '/esign/list', { token: made.body.data.token })).status).toBe(200);
    await until(async () => {
      const items = (await rest<any>(app, 'GET', '/tokens/list', { token: owner.token })).body.data.items;
      return items.find((item: any) => item.client_id === made.body.data.client_id).last_used_at !== null;
    }, 'last_used_at');

    // Another account never sees them.
    const theirs = await rest<any>(app, 'GET', '/tokens/list', { token: other.token });
    expect(theirs.body.data.items.map((item: any) => item.client_id)).not.toContain(made.body.data.client_id);
  });

  it('every root field names the part of the API it belongs to', () => {
    const schema = app.http.schema;
    const unnamed = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((type) =>
      Object.values(type!.getFields())
        .filter((field) => !['sessions', 'stamps', 'webhooks', 'any', 'account'].includes(field.extensions.tokenScope as string))
        .map((field) => `${type!.name}.${field.name}`),
    );
    expect(unnamed).toEqual([]);
  });

  it('refuses unknown and missing scopes, a bad expiry and a missing name', async () => {
    const unknown = await make({ name: 'x', scopes: ['read', 'everything'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([expect.objectContaining({ field: 'scopes' })]);
    expect((await make({ name: 'x' })).body).toMatchObject({ status_code: 400, message: 'missing_fields' });
    expect((await make({ name: 'x', scopes: ['all'], expires_in: 10 })).body.errors?.[0]?.field).toBe('expires_in');
    expect((await make({ scopes: ['all'] })).body.message).toBe('missing_fields');
  });

  it('a scope allows its own part of the API: others answer 403 forbidden naming the scope, on every face', async () => {
    const read = (await make({ name: 'read', scopes: ['read'] })).body.data.token;
    const stamps = (await make({ name: 'stamps', scopes: ['stamps'] })).body.data.token;
    const session = await createSession(app, owner.token, sessionBody(fileId));

    // read: every query, no change.
    expect((await rest<any>(app, 'GET', '/esign/details', { token: read, query: { client_id: session.client_id } })).status).toBe(
      200,
    );
    const cancel = await rest<any>(app, 'POST', '/esign/cancel', { token: read, json: { client_id: session.client_id } });
    expect(cancel.status).toBe(403);
    expect(cancel.body).toMatchObject({ status_code: 403, message: 'forbidden', success: false });
    expect(cancel.body.errors?.[0]).toMatchObject({ field: 'scope', problem: expect.stringContaining('sessions or all') });
    // A refused multipart upload is refused before its body is read.
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array([1, 2, 3])]), 'a.pdf');
    const upload = await fetch(new URL('/api/v1/files/upload-pdf', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${read}` },
      body: form,
    });
    expect(upload.status).toBe(403);
    const overHttp = await graphql(read, 'mutation { cancelEsign(client_id: "x") { client_id } }');
    expect(overHttp.body.errors[0].extensions.code).toBe('forbidden');
    expect(overHttp.body.data?.cancelEsign ?? null).toBeNull();

    // stamps: its own part only, as a query or over graphql-ws.
    expect((await rest<any>(app, 'GET', '/stamps/states', { token: stamps })).status).toBe(200);
    expect((await rest<any>(app, 'GET', '/esign/list', { token: stamps })).status).toBe(403);
    expect((await rest<any>(app, 'GET', '/webhooks/list', { token: stamps })).status).toBe(403);
    const watched = overWs(stamps, 'subscription S($id: String!) { esignSessionUpdated(client_id: $id) { status } }', {
      id: session.client_id,
    });
    await until(() => watched.done, 'the refused subscription');
    expect(watched.errors[0].extensions.code).toBe('forbidden');
    // Who am I answers every token; the tokens themselves are for a token of scope all.
    expect((await graphql(stamps, '{ me { user_id } }')).body.data.me.user_id).toBe(owner.user_id);
    expect((await make({ name: 'wider', scopes: ['all'] }, read)).status).toBe(403);
    expect((await rest<any>(app, 'GET', '/tokens/list', { token: stamps })).status).toBe(403);
    // The session was never touched.
    expect(
      (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } })).body.data
        .status,
    ).toBe('pending');
  });

  it('rotates a secret (with an optional grace for the old one) and revokes a token; another user’s token is 404', async () => {
    const made = (await make({ name: 'server', scopes: ['sessions'] })).body.data;
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const following = overWs(made.token, 'subscription S($id: String!) { esignSessionUpdated(client_id: $id) { status } }', {
      id: session.client_id,
    });
    await until(() => following.results.length > 0, 'the subscription with the first secret');
    const rotated = await rest<any>(app, 'POST', '/tokens/rotate', { token: owner.token, json: { client_id: made.client_id } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body.data).toMatchObject({ client_id: made.client_id, name: 'server', scopes: ['sessions'] });
    expect(rotated.body.data.token).not.toBe(made.token);
    expect((await rest<any>(app, 'GET', '/esign/list', { token: made.token })).status).toBe(401);
    // The socket opened with the old secret is closed with it.
    await until(() => following.done, 'the socket of the old secret to close');
    expect((await rest<any>(app, 'GET', '/esign/list', { token: rotated.body.data.token })).status).toBe(200);

    const graced = await rest<any>(app, 'POST', '/tokens/rotate', {
      token: owner.token,
      json: { client_id: made.client_id, grace_seconds: 600 },
    });
    expect((await rest<any>(app, 'GET', '/esign/list', { token: rotated.body.data.token })).status).toBe(200);
    expect((await rest<any>(app, 'GET', '/esign/list', { token: graced.body.data.token })).status).toBe(200);

    for (const path of ['/tokens/rotate', '/tokens/revoke']) {
      const foreign = await rest<any>(app, 'POST', path, { token: other.token, json: { client_id: made.client_id } });
      expect(foreign.status).toBe(404);
    }
    const revoked = await rest<any>(app, 'POST', '/tokens/revoke', { token: owner.token, json: { client_id: made.client_id } });
    expect(revoked.body.data).toMatchObject({ client_id: made.client_id, revoked_at: expect.any(String) });
    // Both secrets stop at once, the graced one too.
    expect((await rest<any>(app, 'GET', '/esign/list', { token: graced.body.data.token })).status).toBe(401);
    expect((await rest<any>(app, 'GET', '/esign/list', { token: rotated.body.data.token })).status).toBe(401);
    expect(
      (await rest<any>(app, 'POST', '/tokens/rotate', { token: owner.token, json: { client_id: made.client_id } })).status,
    ).toBe(409);
  });

  it('a browser token reads and follows its one session, without credentials, and nothing else', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const another = await createSession(app, owner.token, sessionBody(fileId));
    const minted = await rest<any>(app, 'POST', '/tokens/browser', {
      token: owner.token,
      json: { resource_id: session.client_id, expires_in: 600 },
    });
    expect(minted.status, JSON.stringify(minted.body)).toBe(200);
    expect(minted.body.data).toMatchObject({ kind: 'browser', resource_id: session.client_id, scopes: [] });
    const browser = minted.body.data.token;
    expect(Date.parse(minted.body.data.expires_at) - Date.now()).toBeLessThanOrEqual(600_000);

    const read = await graphql(
      browser,
      'query Q($id: String!) { esignSession(client_id: $id) { client_id status signers { full_name } } }',
      {
        id: session.client_id,
      },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.esignSession).toMatchObject({ client_id: session.client_id, status: 'pending' });
    // The signers' links are credentials: never for a browser.
    const credential = await graphql(browser, 'query Q($id: String!) { esignSession(client_id: $id) { signers { token } } }', {
      id: session.client_id,
    });
    expect(credential.body.errors[0].extensions.code).toBe('forbidden');
    expect(
      (await rest<any>(app, 'GET', '/esign/details', { token: browser, query: { client_id: session.client_id } })).status,
    ).toBe(403);
    // Another session of the same account reads as absent; lists and changes are not a browser's.
    const elsewhere = await graphql(browser, 'query Q($id: String!) { esignSession(client_id: $id) { status } }', {
      id: another.client_id,
    });
    expect(elsewhere.body.errors[0]).toMatchObject({
      message: 'Esign client with the given client_id not found',
      extensions: { code: 'not_found' },
    });
    expect((await graphql(browser, '{ esignSessions { items { client_id } } }')).body.errors[0].extensions.code).toBe(
      'forbidden',
    );
    expect(
      (await rest<any>(app, 'POST', '/tokens/browser', { token: browser, json: { resource_id: session.client_id } })).status,
    ).toBe(403);

    // Followed live: the current state first, then the change.
    const follow = overWs(browser, 'subscription S($id: String!) { esignSessionUpdated(client_id: $id) { status } }', {
      id: session.client_id,
    });
    await until(() => follow.results.length > 0, 'the current state');
    expect(follow.results[0].data.esignSessionUpdated.status).toBe('pending');
    await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
    await until(() => follow.results.some((result) => result.data?.esignSessionUpdated?.status === 'cancelled'), 'the cancel');
    const foreign = overWs(browser, 'subscription S($id: String!) { esignSessionUpdated(client_id: $id) { status } }', {
      id: another.client_id,
    });
    await until(() => foreign.done, 'the refused subscription');
    expect(foreign.errors[0].extensions.code).toBe('not_found');
  });

  it('a browser token for a stamp order reads its order-status, and is minted only within the minting token’s reach', async () => {
    const order = await createStampOrder(app, owner.token, { mock: true });
    expect(order.status, JSON.stringify(order.body)).toBe(200);
    const orderId = order.body.data.client_id;
    const browser = (await rest<any>(app, 'POST', '/tokens/browser', { token: owner.token, json: { resource_id: orderId } })).body
      .data.token;
    const status = await rest<any>(app, 'GET', '/stamps/order-status', { token: browser, query: { client_id: orderId } });
    expect(status.status, JSON.stringify(status.body)).toBe(200);
    expect(status.body.data.client_id).toBe(orderId);
    expect((await rest<any>(app, 'GET', '/stamps/list', { token: browser, query: { page: 1, size: 10 } })).status).toBe(403);
    expect((await rest<any>(app, 'GET', '/wallet', { token: browser })).status).toBe(403);

    // A sessions token may not follow an order; another user's order is 404; at most an hour; ids of a known kind.
    const sessionsOnly = (await make({ name: 'sessions', scopes: ['sessions'] })).body.data.token;
    expect(
      (await rest<any>(app, 'POST', '/tokens/browser', { token: sessionsOnly, json: { resource_id: orderId } })).status,
    ).toBe(403);
    expect((await rest<any>(app, 'POST', '/tokens/browser', { token: other.token, json: { resource_id: orderId } })).status).toBe(
      404,
    );
    const long = await rest<any>(app, 'POST', '/tokens/browser', {
      token: owner.token,
      json: { resource_id: orderId, expires_in: 3601 },
    });
    expect(long.body.errors?.[0]?.field).toBe('expires_in');
    expect((await rest<any>(app, 'POST', '/tokens/browser', { token: owner.token, json: { resource_id: fileId } })).status).toBe(
      400,
    );
  });
});
