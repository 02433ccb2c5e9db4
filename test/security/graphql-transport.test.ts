import { createHash } from 'node:crypto';
import {
  getNamedType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type FormattedExecutionResult,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { issueAccessToken, revokeAccessToken } from '../../src/modules/users/access-tokens';
import { GRAPHQL_MAX_REQUEST_BYTES } from '../../src/platform/graphql/limits';
import { appPort as freePort, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { startServiceProcess } from '../helpers/process';
import { until as untilDone } from '../helpers/until';

const ME = '{ me { user_id } }';
const SESSION_UPDATES = `subscription Watch($client_id: String!) { esignSessionUpdated(client_id: $client_id) { client_id status } }`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls often: these waits are for sockets closing, which happen within milliseconds. */
const until = (done: () => boolean, what: string, timeoutMs = 10_000) => untilDone(done, what, { timeoutMs, pollMs: 25 });

interface Closing {
  code: number;
  reason: string;
  at: number;
}

/** A graphql-ws client (the `graphql-ws` package over `ws`) that records how its socket ended. */
interface WsConnection {
  client: Client;
  connected: Promise<void>;
  closes: Closing[];
}

function openWs(baseUrl: string, token: string): WsConnection {
  const closes: Closing[] = [];
  let connected!: () => void;
  const connection: WsConnection = {
    closes,
    connected: new Promise<void>((resolve) => (connected = resolve)),
    client: createClient({
      url: `${baseUrl.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
      lazy: false,
      onNonLazyError: () => undefined,
      on: {
        connected: () => connected(),
        closed: (event) => {
          const { code, reason } = event as { code: number; reason: string };
          closes.push({ code, reason: String(reason), at: Date.now() });
        },
      },
    }),
  };
  return connection;
}

interface Operation {
  results: FormattedExecutionResult<Record<string, unknown>, unknown>[];
  errors: unknown[];
  completed: boolean;
}

function operate(client: Client, query: string, variables?: Record<string, unknown>, operationName?: string): Operation {
  const operation: Operation = { results: [], errors: [], completed: false };
  client.subscribe(
    { query, variables, operationName },
    {
      next: (result) => void operation.results.push(result),
      error: (error) => void operation.errors.push(error),
      complete: () => void (operation.completed = true),
    },
  );
  return operation;
}

/** The one answer an operation gets over ws: its results, or the errors of its `error` message. */
async function settled(operation: Operation): Promise<Operation> {
  await until(() => operation.completed || operation.errors.length > 0, 'the operation to end');
  return operation;
}

interface HttpAnswer {
  status: number;
  contentType: string;
  body: any;
}

async function postGraphQL(
  app: TestApp,
  token: string | null,
  body: string,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const response = await fetch(new URL('/graphql', app.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body,
  });
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: await response.json() };
}

/** A selection nested `depth` fields deep, found in the schema (no particular type's shape is assumed). */
function deepQuery(schema: GraphQLSchema, depth: number): string {
  const dead = new Set<string>();
  const walk = (type: GraphQLObjectType, remaining: number): string | undefined => {
    if (remaining === 0) return '__typename';
    if (dead.has(`${type.name}:${remaining}`)) return undefined;
    for (const field of Object.values(type.getFields())) {
      const target = getNamedType(field.type);
      const required = field.args.filter((arg) => isNonNullType(arg.type));
      if (
        !isObjectType(target) ||
        required.some((arg) => !isScalarType(getNamedType(arg.type)) || getNamedType(arg.type).name !== 'String')
      )
        continue;
      const inner = walk(target, remaining - 1);
      if (inner === undefined) continue;
      const args = required.map((arg) => `${arg.name}: "x"`).join(', ');
      return `${field.name}${args ? `(${args})` : ''} { ${inner} }`;
    }
    dead.add(`${type.name}:${remaining}`);
    return undefined;
  };
  const selection = walk(schema.getQueryType()!, depth);
  if (!selection) throw new Error(`the schema has no selection ${depth} deep`);
  return `{ ${selection} }`;
}

function codesOf(errors: unknown): string[] {
  return (errors as { extensions?: { code?: string } }[]).map((error) => error.extensions?.code ?? '(none)');
}

describe('graphql-ws connections end with their access token', () => {
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;
  const clients: Client[] = [];
  const em = () => app.services.orm.em.fork();

  const connect = (token: string, baseUrl = app.url) => {
    const connection = openWs(baseUrl, token);
    clients.push(connection.client);
    return connection;
  };

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await app.close();
  });

  /** The service still answers: the owner's other token over HTTP, and a fresh graphql-ws connection. */
  async function stillAnswers(baseUrl = app.url): Promise<void> {
    const http = await fetch(new URL('/graphql', baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ query: ME }),
    });
    expect(((await http.json()) as any).data.me.user_id).toBe(owner.user_id);
    const fresh = connect(owner.token, baseUrl);
    const me = await settled(operate(fresh.client, ME));
    expect(me.results).toEqual([{ data: { me: { user_id: owner.user_id } } }]);
  }

  it('revoking a token (the CLI’s function) closes its sockets with 4401; no event reaches them after', async () => {
    const watcher = await issueAccessToken(em(), owner.user_id, { label: 'watcher' });
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { signers: [signerInput(), signerInput({ full_name: 'B' })] }),
    );
    const first = connect(watcher.token);
    const second = connect(watcher.token);
    await Promise.all([first.connected, second.connected]);
    const updates = operate(first.client, SESSION_UPDATES, { client_id: session.client_id });

    // Live before the revocation: its starting state arrives.
    await until(() => updates.results.length === 1, 'the starting state before the revocation');
    expect(updates.results[0].data).toEqual({ esignSessionUpdated: { client_id: session.client_id, status: 'pending' } });

    await revokeAccessToken(em(), watcher.token_id);
    await until(() => first.closes.length > 0 && second.closes.length > 0, 'both sockets to close', 5_000);
    expect(first.closes[0]).toMatchObject({ code: 4401, reason: 'unauthorized' });
    expect(second.closes[0]).toMatchObject({ code: 4401, reason: 'unauthorized' });

    const cancelled = await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
    expect(cancelled.status).toBe(200);
    await sleep(500);
    expect(updates.results).toHaveLength(1);

    // The token is refused everywhere from now on; the owner's other token is not.
    const refusedHttp = await postGraphQL(app, watcher.token, JSON.stringify({ query: ME }));
    expect(refusedHttp.status).toBe(401);
    const again = connect(watcher.token);
    await until(() => again.closes.length > 0, 'the refusal of the revoked token');
    expect(again.closes[0].code).toBe(4401);
    await stillAnswers();
  });

  // A second process of the service starts here: a ceiling for a loaded machine, not a measure.
  it('a revocation reaches the sockets every process of the service holds (LISTEN/NOTIFY)', { timeout: 300_000 }, async () => {
    const port = await freePort();
    const other = startServiceProcess({
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: app.databaseUrl,
      DATA_DIR: `/tmp/esign-second-${port}`,
      RUN_WORKERS: 'false',
      LOG_LEVEL: 'warn',
    });
    const otherUrl = `http://127.0.0.1:${port}`;
    try {
      await waitForReady(otherUrl);
      const watcher = await issueAccessToken(em(), owner.user_id, { label: 'elsewhere' });
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const remote = connect(watcher.token, otherUrl);
      await remote.connected;
      const updates = operate(remote.client, SESSION_UPDATES, { client_id: session.client_id });
      await until(() => updates.results.length === 1, 'the starting state from the other process');

      // Revoked from this process (as the CLI would from its own): the other process closes its socket.
      await revokeAccessToken(em(), watcher.token_id);
      await until(() => remote.closes.length > 0, 'the other process to close the socket', 5_000);
      expect(remote.closes[0]).toMatchObject({ code: 4401, reason: 'unauthorized' });

      await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
      await sleep(500);
      // The starting state only: nothing after the revocation.
      expect(updates.results).toEqual([{ data: { esignSessionUpdated: { client_id: session.client_id, status: 'pending' } } }]);
      await stillAnswers(otherUrl);
    } finally {
      other.child.kill('SIGTERM');
      await other.exited;
    }
  });

  it('a revocation this process never heard of (its listener was reconnecting) closes the socket once it is back', async () => {
    const unheard = await issueAccessToken(em(), owner.user_id, { label: 'unheard' });
    const connection = connect(unheard.token);
    await connection.connected;
    // Revoked behind the service's back: no notice is ever sent, as when one is sent while nobody listens.
    await em().getConnection().execute('update access_tokens set revoked_at = now() where id = ?', [unheard.token_id]);
    await sleep(300);
    expect(connection.closes).toEqual([]);
    const [{ terminated }] = await em()
      .getConnection()
      .execute(
        `select count(pg_terminate_backend(pid))::int as terminated from pg_stat_activity
          where application_name = 'esign-events' and datname = current_database()`,
      );
    expect(terminated).toBe(1);
    await until(() => connection.closes.length > 0, 'the socket to close after the listener reconnected', 5_000);
    expect(connection.closes[0]).toMatchObject({ code: 4401, reason: 'unauthorized' });
    await stillAnswers();
  });

  it('a token that expires closes its socket when it does (4401), not before', async () => {
    const brief = await issueAccessToken(em(), owner.user_id, { expiresInSeconds: 2 });
    const expiresAt = Date.parse(brief.expires_at!);
    const connection = connect(brief.token);
    await connection.connected;
    const me = await settled(operate(connection.client, ME));
    expect(me.results).toEqual([{ data: { me: { user_id: owner.user_id } } }]);

    await until(() => connection.closes.length > 0, 'the socket of the expired token to close', 10_000);
    expect(connection.closes[0]).toMatchObject({ code: 4401, reason: 'unauthorized' });
    expect(connection.closes[0].at).toBeGreaterThanOrEqual(expiresAt);
    await stillAnswers();
  });

  it('a token that expires beyond a timer’s range (24.8 days) keeps its socket open', async () => {
    const lasting = await issueAccessToken(em(), owner.user_id, { expiresInSeconds: 40 * 86_400 });
    const connection = connect(lasting.token);
    await connection.connected;
    await sleep(1_000);
    const me = await settled(operate(connection.client, ME));
    expect(me.results).toEqual([{ data: { me: { user_id: owner.user_id } } }]);
    expect(connection.closes).toEqual([]);
  });
});

describe('one limit and one set of codes for /graphql over HTTP and over graphql-ws', () => {
  let app: TestApp;
  let owner: TestUser;
  const clients: Client[] = [];

  const connect = () => {
    const connection = openWs(app.url, owner.token);
    clients.push(connection.client);
    return connection;
  };

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await app.close();
  });

  async function stillAnswers(): Promise<void> {
    const http = await postGraphQL(app, owner.token, JSON.stringify({ query: ME }));
    expect(http.body).toEqual({ data: { me: { user_id: owner.user_id } } });
    const me = await settled(operate(connect().client, ME));
    expect(me.results).toEqual([{ data: { me: { user_id: owner.user_id } } }]);
  }

  /** A raw graphql-transport-ws socket, acknowledged, for messages the client library would not send. */
  async function rawSocket(): Promise<{ socket: WebSocket; messages: any[]; closed: Promise<number> }> {
    const socket = new WebSocket(`${app.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    const messages: any[] = [];
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${owner.token}` } }));
    await until(() => messages.some((message) => message.type === 'connection_ack'), 'connection_ack');
    return { socket, messages, closed };
  }

  it('a ws message is held to the HTTP body limit: over it the socket closes (1009), up to it the message is read', async () => {
    expect(GRAPHQL_MAX_REQUEST_BYTES).toBe(1024 * 1024);
    const { socket, messages, closed } = await rawSocket();
    const ping = JSON.stringify({ type: 'ping', payload: { pad: '' } });
    const fits = JSON.stringify({ type: 'ping', payload: { pad: 'x'.repeat(GRAPHQL_MAX_REQUEST_BYTES - ping.length) } });
    expect(Buffer.byteLength(fits)).toBe(GRAPHQL_MAX_REQUEST_BYTES);
    socket.send(fits);
    await until(() => messages.some((message) => message.type === 'pong'), 'the pong of a message of exactly the limit');

    const padded = `{ me { user_id } }${' '.repeat(GRAPHQL_MAX_REQUEST_BYTES)}`;
    socket.send(JSON.stringify({ id: 'big', type: 'subscribe', payload: { query: padded } }));
    expect(await closed).toBe(1009);
    expect(messages.some((message) => message.id === 'big')).toBe(false);
    // A refused request, not a fault: nothing at error level (graphql-ws alone logged its stack as an internal error).
    expect(app.logs.filter((line) => line.level === 50 && /WebSocket/.test(String(line.msg)))).toEqual([]);
    expect(app.logs.some((line) => line.msg === 'graphql-ws message over the size limit: socket closed (1009)')).toBe(true);

    // HTTP refuses the same document with the same limit, as a GraphQL response.
    const http = await postGraphQL(app, owner.token, JSON.stringify({ query: padded }));
    expect(http.status).toBe(413);
    expect(http.contentType).toMatch(/^application\/json/);
    expect(http.body.errors).toHaveLength(1);
    expect(http.body.errors[0]).toMatchObject({
      message: 'payload_too_large',
      extensions: { code: 'payload_too_large', status: 413 },
    });
    expect(http.body).not.toHaveProperty('status_code');
    await stillAnswers();
  });

  it('a syntax error in one subscribe gets an `error` message (bad_request, as HTTP) and the socket keeps its other operations', async () => {
    const broken = 'subscription { esignSessionUpdated(client_id: "esign_x") { status ';
    const connection = connect();
    await connection.connected;
    const fileId = await uploadPdf(app, owner.token);
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const watching = operate(connection.client, SESSION_UPDATES, { client_id: session.client_id });
    const refused = await settled(operate(connection.client, broken));
    const meanwhile = await settled(operate(connection.client, ME));

    expect(codesOf(refused.errors[0])).toEqual(['bad_request']);
    expect((refused.errors[0] as any)[0]).toMatchObject({
      message: expect.stringMatching(/^Syntax Error/),
      extensions: { status: 400 },
    });
    expect(meanwhile.results).toEqual([{ data: { me: { user_id: owner.user_id } } }]);

    await until(() => watching.results.length === 1, 'the starting state of the subscription that shares the socket');
    await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
    await until(() => watching.results.length === 2, 'the update of the subscription that shares the socket');
    expect(watching.results.map((result) => result.data)).toEqual([
      { esignSessionUpdated: { client_id: session.client_id, status: 'pending' } },
      { esignSessionUpdated: { client_id: session.client_id, status: 'cancelled' } },
    ]);
    expect(connection.closes).toEqual([]);

    const http = await postGraphQL(app, owner.token, JSON.stringify({ query: broken }));
    expect(http.status).toBe(400);
    expect(codesOf(http.body.errors)).toEqual(['bad_request']);
    expect(http.body.errors[0].message).toBe((refused.errors[0] as any)[0].message);
  });

  it('unknown field, too deep, refused variables, unknown operation: the same code and text over HTTP and ws', async () => {
    const cases: { name: string; query: string; variables?: Record<string, unknown>; operationName?: string }[] = [
      { name: 'unknown field', query: '{ me { user_id nickname } }' },
      { name: 'too deep', query: deepQuery(app.http.schema, 13) },
      {
        name: 'missing variable',
        query: 'query Read($id: String!) { esignSession(client_id: $id) { client_id } }',
        variables: {},
      },
      {
        name: 'mistyped variable',
        query: 'query Read($id: String!) { esignSession(client_id: $id) { client_id } }',
        variables: { id: { not: 'text' } },
      },
      { name: 'unknown operation', query: 'query A { me { user_id } }', operationName: 'B' },
      { name: 'two operations, no name', query: 'query A { me { user_id } } query B { me { user_id } }' },
    ];
    const connection = connect();
    for (const each of cases) {
      const http = await postGraphQL(
        app,
        owner.token,
        JSON.stringify({ query: each.query, variables: each.variables, operationName: each.operationName }),
      );
      const ws = await settled(operate(connection.client, each.query, each.variables, each.operationName));
      expect(http.status, each.name).toBe(400);
      expect(http.body.data, each.name).toBeUndefined();
      expect(codesOf(http.body.errors), each.name).toEqual(['bad_request']);
      expect(ws.results, each.name).toEqual([]);
      expect(codesOf(ws.errors[0]), each.name).toEqual(['bad_request']);
      const messages = (errors: any[]) => errors.map((error) => error.message);
      expect(messages(ws.errors[0] as any[]), each.name).toEqual(messages(http.body.errors));
    }
    expect(connection.closes).toEqual([]);
    await stillAnswers();
  });

  it('whatever goes wrong on /graphql over HTTP, the answer is {errors: [{message, extensions: {code}}]} with a lowercase code', async () => {
    const refusals: { name: string; answer: () => Promise<HttpAnswer>; status: number; code: string }[] = [
      { name: 'bad JSON', answer: () => postGraphQL(app, owner.token, '{"query": '), status: 400, code: 'bad_request' },
      {
        name: 'JSON that is not an object',
        answer: () => postGraphQL(app, owner.token, '"{ me { user_id } }"'),
        status: 400,
        code: 'bad_request',
      },
      { name: 'no query', answer: () => postGraphQL(app, owner.token, '{}'), status: 400, code: 'bad_request' },
      {
        name: 'batching',
        answer: () => postGraphQL(app, owner.token, JSON.stringify([{ query: ME }, { query: ME }])),
        status: 400,
        code: 'bad_request',
      },
      {
        name: 'APQ hash mismatch',
        answer: () =>
          postGraphQL(
            app,
            owner.token,
            JSON.stringify({ query: ME, extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } } }),
          ),
        status: 400,
        code: 'bad_request',
      },
      {
        name: 'APQ version',
        answer: () =>
          postGraphQL(
            app,
            owner.token,
            JSON.stringify({ query: ME, extensions: { persistedQuery: { version: 2, sha256Hash: '0'.repeat(64) } } }),
          ),
        status: 400,
        code: 'bad_request',
      },
      {
        name: 'a subscription over HTTP',
        answer: () =>
          postGraphQL(
            app,
            owner.token,
            JSON.stringify({ query: 'subscription { esignSessionUpdated(client_id: "esign_x") { status } }' }),
          ),
        status: 400,
        code: 'bad_request',
      },
      {
        name: 'unauthenticated',
        answer: () => postGraphQL(app, null, JSON.stringify({ query: ME })),
        status: 401,
        code: 'unauthorized',
      },
      {
        name: 'a bad multipart map',
        answer: async () => {
          const form = new FormData();
          form.append(
            'operations',
            JSON.stringify({
              query: 'mutation ($file: Upload!) { uploadPdf(file: $file) { client_id } }',
              variables: { file: null },
            }),
          );
          form.append('map', '{not json');
          form.append('0', new Blob([new Uint8Array([37, 80, 68, 70])]), 'a.pdf');
          const response = await fetch(new URL('/graphql', app.url), {
            method: 'POST',
            headers: { authorization: `Bearer ${owner.token}`, 'apollo-require-preflight': 'true' },
            body: form,
          });
          return {
            status: response.status,
            contentType: response.headers.get('content-type') ?? '',
            body: await response.json(),
          };
        },
        status: 400,
        code: 'bad_request',
      },
      {
        name: 'multipart operations over the size limit',
        answer: async () => {
          const form = new FormData();
          form.append('operations', JSON.stringify({ query: ME, pad: 'x'.repeat(GRAPHQL_MAX_REQUEST_BYTES) }));
          form.append('map', '{}');
          const response = await fetch(new URL('/graphql', app.url), {
            method: 'POST',
            headers: { authorization: `Bearer ${owner.token}`, 'apollo-require-preflight': 'true' },
            body: form,
          });
          return {
            status: response.status,
            contentType: response.headers.get('content-type') ?? '',
            body: await response.json(),
          };
        },
        status: 413,
        code: 'payload_too_large',
      },
      {
        name: 'a text/plain POST (refused as a possible CSRF)',
        answer: () => postGraphQL(app, owner.token, JSON.stringify({ query: ME }), { 'content-type': 'text/plain' }),
        status: 400,
        code: 'bad_request',
      },
      {
        name: 'a mutation over GET',
        answer: async () => {
          const url = new URL('/graphql', app.url);
          url.searchParams.set('query', 'mutation { cancelEsign(client_id: "esign_x") { status } }');
          const response = await fetch(url, {
            headers: { authorization: `Bearer ${owner.token}`, 'apollo-require-preflight': 'true' },
          });
          return {
            status: response.status,
            contentType: response.headers.get('content-type') ?? '',
            body: await response.json(),
          };
        },
        status: 405,
        code: 'method_not_allowed',
      },
    ];
    for (const refusal of refusals) {
      const answer = await refusal.answer();
      expect(answer.status, refusal.name).toBe(refusal.status);
      expect(answer.contentType, refusal.name).toMatch(/^application\/(graphql-response\+)?json/);
      expect(Object.keys(answer.body), refusal.name).toEqual(['errors']);
      expect(answer.body.errors, refusal.name).toHaveLength(1);
      expect(answer.body.errors[0], refusal.name).toMatchObject({
        message: expect.any(String),
        extensions: { code: refusal.code },
      });
    }
    await stillAnswers();
  });

  it('persisted queries still work, and their signal keeps the code Apollo clients match', async () => {
    const query = '{ me { user_id email } }';
    const persisted = { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') };
    const unknown = await postGraphQL(app, owner.token, JSON.stringify({ extensions: { persistedQuery: persisted } }));
    // Apollo Client retries with the full query on this message (kept) and this 200.
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({
      errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', status: 200 } }],
    });
    const registered = await postGraphQL(app, owner.token, JSON.stringify({ query, extensions: { persistedQuery: persisted } }));
    expect(registered.body.data.me.user_id).toBe(owner.user_id);
    const byHash = await postGraphQL(app, owner.token, JSON.stringify({ extensions: { persistedQuery: persisted } }));
    expect(byHash.body.data.me.user_id).toBe(owner.user_id);
  });

  it('REST keeps its envelope for the same faults', async () => {
    const badJson = await rest(app, 'POST', '/esign/initialize-esign', { token: owner.token, rawBody: '{"sign_type": ' });
    expect(badJson.status).toBe(400);
    expect(badJson.body).toMatchObject({ data: null, status_code: 400, message: 'bad_request', success: false });
    const tooLarge = await rest(app, 'POST', '/esign/initialize-esign', {
      token: owner.token,
      json: { sign_type: 'suresign', pad: 'x'.repeat(GRAPHQL_MAX_REQUEST_BYTES) },
    });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatchObject({ data: null, status_code: 413, message: 'payload_too_large', success: false });
  });
});

async function waitForReady(baseUrl: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('the second process did not become ready');
    await sleep(100);
  }
}
