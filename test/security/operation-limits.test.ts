import 'reflect-metadata';
import { getIntrospectionQuery, parse, type GraphQLSchema } from 'graphql';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AppError } from '../../src/platform/errors';
import { composition } from '../../src/modules';
import { buildAppSchema } from '../../src/platform/graphql/schema';
import { DEFAULT_OPERATION_LIMITS, checkOperationLimits, operationCost } from '../../src/platform/graphql/operation-limits';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';

/** The nested read of the benchmark (a page of sessions with signers, elements, assets and stamps). */
const NESTED_PAGE = `query Page($size: Int!) {
  esignSessions(page: 1, size: $size) {
    items {
      client_id status
      signers { signer_id elements { field_id asset { client_id } } }
      stamps { stamp_id order { client_id } pdf_file { client_id } }
      source_file { client_id }
    }
  }
}`;

describe('operation cost: a list costs its page size or its declared maximum times its selection', () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await buildAppSchema(composition.resolvers);
  });
  const cost = (query: string, variables: Record<string, unknown> = {}) =>
    operationCost(schema, parse(query), undefined, variables);

  it('counts a page by its size and each nested list by its bound', () => {
    // 1 (me) + 2 scalars.
    expect(cost('{ me { user_id email } }')).toBe(3);
    // files(size) multiplies the page: 1 + 10 x (1 items + 10 ... ) -- a page of 10 files with 2 fields each.
    const tenFiles = cost('{ files(page: 1, size: 10) { items { client_id name } has_next } }');
    const twentyFiles = cost('{ files { items { client_id name } has_next } }');
    expect(twentyFiles).toBeGreaterThan(tenFiles);
    expect(cost('query F($n: Int!) { files(page: 1, size: $n) { items { client_id } } }', { n: 10 })).toBeLessThan(
      cost('query F($n: Int!) { files(page: 1, size: $n) { items { client_id } } }', { n: 100 }),
    );
    // A session's signers count 50 (the most a session can have), elements 50 each.
    const signers = cost('{ esignSession(client_id: "esign_x") { signers { signer_id } } }');
    const elements = cost('{ esignSession(client_id: "esign_x") { signers { signer_id elements { field_id } } } }');
    expect(signers).toBe(1 + 1 + 50 * 1);
    expect(elements).toBe(1 + 1 + 50 * (1 + 1 + 50 * 1));
  });

  it('an order’s stamps count 5000 unpaged and their page size when paged', () => {
    const unpaged = cost('{ stampOrder(client_id: "stamp_x") { stamps { stamp_id } } }');
    const paged = cost('{ stampOrder(client_id: "stamp_x") { stamps(page: 1, size: 10) { stamp_id } } }');
    expect(unpaged).toBe(1 + 1 + 5000 * 1);
    expect(paged).toBe(1 + 1 + 10 * 1);
  });

  it('accepts the benchmark’s nested page of 50 and refuses the nesting that multiplies 5000-stamp orders', () => {
    const nested = cost(NESTED_PAGE, { size: 50 });
    console.log(`nested page of 50 costs ${nested}; the limit is ${DEFAULT_OPERATION_LIMITS.maxCost}`);
    expect(nested).toBeLessThanOrEqual(DEFAULT_OPERATION_LIMITS.maxCost);
    const bomb = '{ stampOrder(client_id: "stamp_x") { stamps { order { stamps { order { stamps { stamp_id } } } } } } }';
    expect(cost(bomb)).toBeGreaterThan(1e9);
    let refusal: AppError | undefined;
    try {
      checkOperationLimits(schema, parse(bomb), undefined, {}, DEFAULT_OPERATION_LIMITS);
    } catch (error) {
      refusal = error as AppError;
    }
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'query_too_complex', status: 400 });
    expect(refusal!.details).toEqual({ cost: cost(bomb), limit: DEFAULT_OPERATION_LIMITS.maxCost });
  });

  it('lets the standard introspection query through (tools send it), and still weighs what it wraps', () => {
    expect(() =>
      checkOperationLimits(schema, parse(getIntrospectionQuery()), undefined, {}, DEFAULT_OPERATION_LIMITS),
    ).not.toThrow();
    const hidden = `{ __typename ${'{ stampOrder(client_id: "stamp_x") { stamps { order { stamps { order { stamps { stamp_id } } } } } } }'.slice(1, -1)} }`;
    expect(() => checkOperationLimits(schema, parse(hidden), undefined, {}, DEFAULT_OPERATION_LIMITS)).toThrow(
      expect.objectContaining({ code: 'query_too_complex' }),
    );
  });

  it('refuses more aliases than the limit, counted through fragments', () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: me { user_id }`).join(' ')} }`;
    expect(() => checkOperationLimits(schema, parse(aliases(30)), undefined, {}, DEFAULT_OPERATION_LIMITS)).not.toThrow();
    expect(() => checkOperationLimits(schema, parse(aliases(31)), undefined, {}, DEFAULT_OPERATION_LIMITS)).toThrow(
      expect.objectContaining({ code: 'query_too_complex', details: { aliases_limit: 30 } }),
    );
    const viaFragment = `fragment F on Me { ${Array.from({ length: 31 }, (_, i) => `b${i}: user_id`).join(' ')} } { me { ...F } }`;
    expect(() => checkOperationLimits(schema, parse(viaFragment), undefined, {}, DEFAULT_OPERATION_LIMITS)).toThrow(
      expect.objectContaining({ code: 'query_too_complex' }),
    );
  });

  it('stops weighing documents whose fragments spread into each other beyond measure', () => {
    const fragments = Array.from({ length: 24 }, (_, i) => `fragment F${i} on Me { user_id ...F${i + 1} ...F${i + 1} }`);
    fragments.push('fragment F24 on Me { email }');
    const query = `${fragments.join('\n')}\n{ me { ...F0 } }`;
    expect(() => checkOperationLimits(schema, parse(query), undefined, {}, DEFAULT_OPERATION_LIMITS)).toThrow(
      expect.objectContaining({ code: 'query_too_complex' }),
    );
  });
});

describe('the limits on both transports, and an order’s stamps paged on GraphQL while REST lists them all', () => {
  let app: TestApp;
  let owner: TestUser;
  beforeAll(async () => {
    app = await startTestApp({ env: { GRAPHQL_MAX_TOKENS: '400' } });
    owner = await app.createUser();
  });
  afterAll(() => app.close());

  async function overHttp(query: string, variables?: Record<string, unknown>) {
    const response = await fetch(new URL('/graphql', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  /** One operation over graphql-ws: its first `next` payload or its errors. */
  async function overWs(query: string): Promise<{ errors?: any[]; data?: unknown }> {
    const client = createClient({
      url: `${app.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${owner.token}` },
      retryAttempts: 0,
    });
    try {
      return await new Promise((resolve) => {
        client.subscribe(
          { query },
          {
            next: (value) => resolve(value as { data?: unknown }),
            error: (errors) => resolve({ errors: errors as any[] }),
            complete: () => undefined,
          },
        );
      });
    } finally {
      await client.dispose();
    }
  }

  const BOMB = '{ stampOrder(client_id: "stamp_x") { stamps { order { stamps { order { stamps { stamp_id } } } } } } }';

  it('a costly operation is query_too_complex with its cost and the limit, the same over HTTP and ws', async () => {
    const http = await overHttp(BOMB);
    expect(http.status).toBe(400);
    expect(http.body.data ?? null).toBeNull();
    expect(http.body.errors[0].extensions).toEqual({
      code: 'query_too_complex',
      status: 400,
      errors: [{ field: 'query', problem: expect.stringMatching(/^cost \d+ exceeds 1000000$/) }],
      cost: expect.any(Number),
      limit: DEFAULT_OPERATION_LIMITS.maxCost,
    });
    const ws = await overWs(BOMB);
    expect(ws.errors?.[0].extensions).toEqual(http.body.errors[0].extensions);
    expect(ws.errors?.[0].message).toBe(http.body.errors[0].message);
  });

  it('too many aliases and too many tokens are refused on both transports, and the service goes on', async () => {
    const aliases = `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: me { user_id }`).join(' ')} }`;
    const http = await overHttp(aliases);
    expect(http.body.errors[0].extensions).toMatchObject({ code: 'query_too_complex', aliases_limit: 30 });
    expect((await overWs(aliases)).errors?.[0].extensions).toMatchObject({ code: 'query_too_complex', aliases_limit: 30 });

    // GRAPHQL_MAX_TOKENS=400 here: graphql-js stops parsing at the 401st token.
    const long = `{ me { ${Array.from({ length: 400 }, () => 'user_id').join(' ')} } }`;
    const tooLong = await overHttp(long);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.errors[0]).toMatchObject({ extensions: { code: 'bad_request' } });
    expect(tooLong.body.errors[0].message).toMatch(/tokens/);
    const wsLong = await overWs(long);
    expect(wsLong.errors?.[0]).toMatchObject({ message: tooLong.body.errors[0].message, extensions: { code: 'bad_request' } });

    expect((await overHttp('{ me { user_id } }')).body).toEqual({ data: { me: { user_id: owner.user_id } } });
  });

  it('GraphQL pages an order’s stamps; REST order-status lists every one, as the contract says', async () => {
    const created = await rest<{ client_id: string }>(app, 'POST', '/stamps/create-order', {
      token: owner.token,
      json: {
        state_code: 'MH',
        article_id: 'MH-5',
        first_party_name: 'Asha Rao',
        second_party_name: 'Vikram Singh',
        stamp_duty_amount: 100,
        consideration_amount: 1000,
        quantity: 7,
        mock: true,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const clientId = created.body.data!.client_id;
    let all: { stamp_id: string }[] = [];
    const deadline = Date.now() + 30_000;
    while (all.length < 7 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const status = await rest<{ stamps: { stamp_id: string }[] }>(app, 'GET', '/stamps/order-status', {
        token: owner.token,
        query: { client_id: clientId },
      });
      all = status.body.data!.stamps;
    }
    expect(all).toHaveLength(7);

    const page = await overHttp(
      `query ($id: String!) { stampOrder(client_id: $id) { p2: stamps(page: 2, size: 3) { stamp_id } p3: stamps(page: 3, size: 3) { stamp_id } all: stamps { stamp_id } } }`,
      { id: clientId },
    );
    expect(page.body.errors).toBeUndefined();
    expect(page.body.data.stampOrder.p2.map((s: any) => s.stamp_id)).toEqual(all.slice(3, 6).map((s) => s.stamp_id));
    expect(page.body.data.stampOrder.p3.map((s: any) => s.stamp_id)).toEqual(all.slice(6).map((s) => s.stamp_id));
    expect(page.body.data.stampOrder.all).toEqual(all.map((s) => ({ stamp_id: s.stamp_id })));

    const badPage = await overHttp(`{ stampOrder(client_id: "${clientId}") { stamps(page: 0, size: 3) { stamp_id } } }`);
    expect(badPage.body.errors[0].extensions).toMatchObject({ code: 'bad_request', errors: [{ field: 'page' }] });
  });
});
