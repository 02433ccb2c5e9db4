import { setTimeout as sleep } from 'node:timers/promises';
import { inflateSync } from 'node:zlib';
import { PDFArray, PDFDocument, PDFName, PDFRawStream, type PDFObject } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { procureBatch } from '../../src/modules/stamps/procure-stamps.job';
import { SimulatedVendor } from '../../src/modules/sandbox/vendors/simulated-vendors';
import type { StampVendor } from '../../src/modules/stamps/vendors/vendor';
import { creditWallet } from '../../src/modules/wallet/credit-wallet';
import {
  StampOrdersArticlesDocument,
  StampOrdersCreateDocument,
  StampOrdersReadDocument,
  StampOrdersWalletDocument,
  type StampOrdersCreateMutationVariables,
} from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql, rest, type RestResponse } from '../helpers/clients';

/** The keys the contract documents for a Stamp order, without `status_counts` (absent in the create answer). */
const CREATED_ORDER_KEYS = [
  'article_id',
  'client_id',
  'consideration_amount',
  'created_at',
  'description',
  'first_party_address',
  'first_party_name',
  'mock',
  'quantity',
  'second_party_name',
  'stamp_duty_amount',
  'stamps',
  'state_code',
  'user_id',
];
/** Order reads add `status_counts`, and (added by this service) `status` and `net_charged_amount`. */
const ORDER_KEYS = [...CREATED_ORDER_KEYS, 'net_charged_amount', 'status', 'status_counts'].sort();
const STATUS_KEYS = ['available', 'pending', 'rejected', 'reserved', 'used'];

interface StatusCounts {
  pending: number;
  available: number;
  reserved: number;
  used: number;
  rejected: number;
}

interface OrderJson {
  user_id: string;
  client_id: string;
  created_at: string;
  state_code: string;
  first_party_name: string;
  second_party_name: string;
  article_id: string;
  stamp_duty_amount: string;
  consideration_amount: number;
  description: string | null;
  first_party_address: string | null;
  quantity: number;
  mock: boolean;
  stamps: { stamp_id: string; status: string }[];
  status_counts?: StatusCounts;
  status?: string;
  net_charged_amount?: string;
}

interface WalletJson {
  user_id: string;
  balance: string;
  currency: string;
  recent_entries: { entry_id: string; kind: string; amount: string; balance_after: string; reference: string | null }[];
}

interface LedgerPage {
  items: WalletJson['recent_entries'];
  has_next: boolean;
}

/** A valid order body; every case below changes one thing. */
function orderBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    state_code: 'MH',
    first_party_name: 'Asha Rao',
    second_party_name: 'Vikram Singh',
    article_id: 'MH-5',
    stamp_duty_amount: 100,
    consideration_amount: 5000,
    quantity: 1,
    description: 'Leave and licence agreement for flat 4B',
    first_party_address: '12 Marine Drive, Mumbai 400020',
    ...overrides,
  };
}

function createOrder(
  app: TestApp,
  token: string,
  body: Record<string, unknown>,
  idempotencyKey?: string,
): Promise<RestResponse<OrderJson>> {
  return rest<OrderJson>(app, 'POST', '/stamps/create-order', {
    token,
    json: body,
    headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
  });
}

async function placeOrder(app: TestApp, token: string, body: Record<string, unknown>, key?: string): Promise<OrderJson> {
  const response = await createOrder(app, token, body, key);
  if (response.status !== 200) throw new Error(`create-order failed: ${JSON.stringify(response.body)}`);
  return response.body.data!;
}

function orderStatus(app: TestApp, token: string, clientId: string): Promise<RestResponse<OrderJson>> {
  return rest<OrderJson>(app, 'GET', '/stamps/order-status', { token, query: { client_id: clientId } });
}

/** Polls order-status until `done` holds; bounded, so a stuck procurement fails the test instead of hanging it. */
async function waitForOrder(
  app: TestApp,
  token: string,
  clientId: string,
  done: (order: OrderJson) => boolean,
  timeoutMs = 30_000,
): Promise<OrderJson> {
  const deadline = Date.now() + timeoutMs;
  let last: OrderJson | null = null;
  while (Date.now() < deadline) {
    const response = await orderStatus(app, token, clientId);
    expect(response.status).toBe(200);
    last = response.body.data!;
    if (done(last)) return last;
    await sleep(200);
  }
  throw new Error(`order ${clientId} did not settle: ${JSON.stringify(last?.status_counts)}`);
}

async function wallet(app: TestApp, token: string): Promise<WalletJson> {
  const response = await rest<WalletJson>(app, 'GET', '/wallet', { token });
  expect(response.status).toBe(200);
  return response.body.data!;
}

async function credit(app: TestApp, userId: string, paise: bigint): Promise<void> {
  await creditWallet(app.services.orm.em.fork(), userId, paise);
}

/** Rows of the user in the three tables an order writes (what "nothing created, nothing charged" means). */
async function footprint(app: TestApp, userId: string): Promise<{ orders: number; instances: number; entries: number }> {
  const conn = app.services.orm.em.fork().getConnection();
  const count = async (table: string) =>
    (await conn.execute<{ n: number }[]>(`select count(*)::int as n from ${table} where user_id = ?`, [userId]))[0].n;
  return {
    orders: await count('stamp_orders'),
    instances: await count('stamp_instances'),
    entries: await count('wallet_entries'),
  };
}

async function ledgerRows(
  app: TestApp,
  userId: string,
  kind?: string,
): Promise<{ kind: string; amount_paise: string; reference: string | null; balance_after_paise: string }[]> {
  return app.services.orm.em
    .fork()
    .getConnection()
    .execute(
      `select kind, amount_paise::text as amount_paise, reference, balance_after_paise::text as balance_after_paise
         from wallet_entries where user_id = ? ${kind ? 'and kind = ?' : ''} order by created_at, id`,
      kind ? [userId, kind] : [userId],
    );
}

/** The text drawn on a page: inflates its content streams and decodes the strings of Tj operators. */
function pageText(doc: PDFDocument): string {
  const page = doc.getPage(0);
  const contents = page.node.get(PDFName.of('Contents'));
  const refs: PDFObject[] = contents instanceof PDFArray ? contents.asArray() : contents ? [contents] : [];
  let text = '';
  for (const ref of refs) {
    const stream = doc.context.lookup(ref);
    if (!(stream instanceof PDFRawStream)) continue;
    const filter = stream.dict.get(PDFName.of('Filter'));
    const raw = stream.getContents();
    const decoded = Buffer.from(filter === PDFName.of('FlateDecode') ? inflateSync(raw) : raw).toString('latin1');
    for (const match of decoded.matchAll(/<([0-9A-Fa-f]*)>\s*Tj|\(((?:\\.|[^\\)])*)\)\s*Tj/g)) {
      text += (match[1] !== undefined ? Buffer.from(match[1], 'hex').toString('latin1') : match[2]) + '\n';
    }
  }
  return text;
}

describe('stamp orders', () => {
  /** Workers on, a vendor that answers at once and never refuses: procurement is deterministic. */
  let app: TestApp;
  /** Every stamp refused by the vendor, and a fee of 2.50 instead of the default 10.00. */
  let rejecting: TestApp;
  /** No workers: orders stay pending. */
  let idle: TestApp;

  beforeAll(async () => {
    [app, rejecting, idle] = await Promise.all([
      startTestApp({ env: { STAMP_VENDOR_REJECTION_RATE: '0', STAMP_VENDOR_LATENCY_MS: '0' } }),
      startTestApp({
        env: { STAMP_VENDOR_REJECTION_RATE: '1', STAMP_VENDOR_LATENCY_MS: '0', ESTAMP_FEE_PER_STAMP: '2.50' },
      }),
      startTestApp({ env: { RUN_WORKERS: 'false' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([app?.close(), rejecting?.close(), idle?.close()]);
  });

  describe('reference data', () => {
    let user: TestUser;
    beforeAll(async () => {
      user = await app.createUser();
    });

    it('lists the supported states as {state_code, name}', async () => {
      const response = await rest<{ state_code: string; name: string }[]>(app, 'GET', '/stamps/states', { token: user.token });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status_code: 200, success: true });
      const states = response.body.data!;
      for (const state of states) expect(Object.keys(state).sort()).toEqual(['name', 'state_code']);
      const codes = states.map((state) => state.state_code);
      expect(codes).toEqual(expect.arrayContaining(['DL', 'MH', 'KA', 'TN', 'UP', 'WB']));
      expect(states).toContainEqual({ state_code: 'MH', name: 'Maharashtra' });
      expect(states).toContainEqual({ state_code: 'DL', name: 'Delhi' });
    });

    it('lists the articles of a state as {article_id, name, description}; the state code is case-insensitive', async () => {
      const response = await rest<{ article_id: string; name: string; description: string }[]>(app, 'GET', '/stamps/articles', {
        token: user.token,
        query: { state_code: 'MH' },
      });
      expect(response.status).toBe(200);
      const articles = response.body.data!;
      expect(articles.length).toBeGreaterThan(2);
      for (const article of articles) {
        expect(Object.keys(article).sort()).toEqual(['article_id', 'description', 'name']);
        expect(article.article_id).toMatch(/^MH-\d+[A-Z]?$/);
        expect(article.name.length).toBeGreaterThan(0);
        expect(article.description.length).toBeGreaterThan(0);
      }
      expect(articles.map((article) => article.article_id)).toContain('MH-5');

      const lower = await rest<typeof articles>(app, 'GET', '/stamps/articles', {
        token: user.token,
        query: { state_code: 'mh' },
      });
      expect(lower.status).toBe(200);
      expect(lower.body.data).toEqual(articles);
    });

    it('refuses a missing or unknown state code', async () => {
      const missing = await rest(app, 'GET', '/stamps/articles', { token: user.token });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ data: null, status_code: 400, message: 'missing_fields', success: false });
      expect(missing.body.errors).toContainEqual(expect.objectContaining({ field: 'state_code' }));

      const unknown = await rest(app, 'GET', '/stamps/articles', { token: user.token, query: { state_code: 'ZZ' } });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ data: null, message: 'invalid_state_code', success: false });
      expect(unknown.body.errors).toContainEqual(expect.objectContaining({ field: 'state_code' }));
    });
  });

  describe('create-order validation', () => {
    let user: TestUser;
    beforeAll(async () => {
      user = await app.createUser();
      await credit(app, user.user_id, 500_000n);
    });

    async function refused(body: Record<string, unknown>, status: number, message: string, field: string) {
      const response = await createOrder(app, user.token, body);
      expect(response.status, JSON.stringify(response.body)).toBe(status);
      expect(response.body).toMatchObject({ data: null, status_code: status, message, success: false });
      expect(response.body.errors, JSON.stringify(response.body)).toContainEqual(expect.objectContaining({ field }));
    }

    const REQUIRED = [
      'state_code',
      'first_party_name',
      'second_party_name',
      'article_id',
      'stamp_duty_amount',
      'consideration_amount',
      'quantity',
    ];

    it.each(REQUIRED)('a missing %s is 400 missing_fields naming it', async (field) => {
      const body = orderBody();
      delete body[field];
      await refused(body, 400, 'missing_fields', field);
      await refused({ ...orderBody(), [field]: null }, 400, 'missing_fields', field);
    });

    it('names every missing field at once', async () => {
      const response = await createOrder(app, user.token, {});
      expect(response.status).toBe(400);
      expect(response.body.message).toBe('missing_fields');
      expect(response.body.errors!.map((error) => error.field).sort()).toEqual([...REQUIRED].sort());
    });

    it.each([
      ['first_party_name', '', 'missing_fields'],
      ['first_party_name', '   ', 'missing_fields'],
      ['first_party_name', 'a'.repeat(201), 'bad_request'],
      ['second_party_name', '', 'missing_fields'],
      ['second_party_name', '   ', 'missing_fields'],
      ['second_party_name', 'b'.repeat(201), 'bad_request'],
      ['article_id', 'MH-' + '5'.repeat(98), 'bad_request'], // 101 characters
      ['stamp_duty_amount', 0, 'bad_request'],
      ['stamp_duty_amount', 1_000_001, 'bad_request'],
      ['stamp_duty_amount', 12.5, 'bad_request'],
      ['stamp_duty_amount', -3, 'bad_request'],
      ['consideration_amount', 0, 'bad_request'],
      ['consideration_amount', -1, 'bad_request'],
      ['consideration_amount', 12.345, 'bad_request'],
      ['quantity', 0, 'bad_request'],
      ['quantity', 5001, 'bad_request'],
      ['quantity', -1, 'bad_request'],
      ['description', 'd'.repeat(501), 'bad_request'],
      ['first_party_address', '', 'bad_request'],
      ['first_party_address', '   ', 'bad_request'],
      ['first_party_address', 'a'.repeat(501), 'bad_request'],
    ])('%s = %j is 400 %s', async (field, value, code) => {
      await refused(orderBody({ [field]: value }), 400, code, field);
    });

    it('refuses an unknown state, an article of another state and an unknown article', async () => {
      await refused(orderBody({ state_code: 'ZZ' }), 400, 'invalid_state_code', 'state_code');
      await refused(orderBody({ state_code: 'Maharashtra' }), 400, 'invalid_state_code', 'state_code');
      await refused(orderBody({ state_code: 'MH', article_id: 'KA-20' }), 400, 'invalid_article_id', 'article_id');
      await refused(orderBody({ article_id: 'MH-9999' }), 400, 'invalid_article_id', 'article_id');
    });

    /** Values the REST layer refuses before create-order runs (GraphQL scalar coercion). */
    const WRONG_TYPES: [string, unknown][] = [
      ['quantity', 2.5],
      ['quantity', 'ten'],
      ['stamp_duty_amount', 'abc'],
      ['consideration_amount', 'a lot'],
    ];

    it.each(WRONG_TYPES)('%s = %j (not a value of its type) is 400 bad_request', async (field, value) => {
      const response = await createOrder(app, user.token, orderBody({ [field]: value }));
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body).toMatchObject({ data: null, status_code: 400, message: 'bad_request', success: false });
    });

    it.each(WRONG_TYPES)('%s = %j: errors name the field', async (field, value) => {
      await refused(orderBody({ [field]: value }), 400, 'bad_request', field);
    });

    // SOFA alone would coerce these (a string "yes" for mock even became a billed, non-mock order).
    it.each([
      ['stamp_duty_amount', '100'],
      ['quantity', '1'],
      ['quantity', true],
      ['first_party_name', 42],
      ['mock', 'yes'],
      ['mock', 1],
    ] as [string, unknown][])('%s of another JSON type (%j) is refused, not coerced', async (field, value) => {
      const someone = await app.createUser();
      await credit(app, someone.user_id, 100_000n);
      const response = await createOrder(app, someone.token, orderBody({ [field]: value }));
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.message).toBe('bad_request');
      expect(await footprint(app, someone.user_id)).toEqual({ orders: 0, instances: 0, entries: 1 });
    });

    it('refuses a body that is not a JSON object', async () => {
      const response = await rest(app, 'POST', '/stamps/create-order', { token: user.token, rawBody: '[1,2]' });
      expect(response.status).toBe(400);
      expect(response.body.message).toBe('bad_request');
      const malformed = await rest(app, 'POST', '/stamps/create-order', { token: user.token, rawBody: '{"quantity":' });
      expect(malformed.status).toBe(400);
      expect(malformed.body.message).toBe('bad_request');
    });

    it('created nothing and charged nothing for any refused request', async () => {
      expect(await footprint(app, user.user_id)).toEqual({ orders: 0, instances: 0, entries: 1 });
      expect((await wallet(app, user.token)).balance).toBe('5000.00');
    });

    it('accepts the boundaries: duty 1 and 1,000,000, quantity 1, names of 200, description and address of 500', async () => {
      const boundary = await app.createUser();
      const cases = [
        orderBody({ stamp_duty_amount: 1, mock: true }),
        orderBody({ stamp_duty_amount: 1_000_000, mock: true }),
        orderBody({
          quantity: 1,
          first_party_name: 'F'.repeat(200),
          second_party_name: 'S'.repeat(200),
          description: 'D'.repeat(500),
          first_party_address: 'A'.repeat(500),
          mock: true,
        }),
        orderBody({ first_party_address: 'X', description: undefined, consideration_amount: 0.01, mock: true }),
      ];
      for (const body of cases) {
        const response = await createOrder(app, boundary.token, body);
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.body.data).toMatchObject({
          stamp_duty_amount: String(body.stamp_duty_amount),
          first_party_name: body.first_party_name,
          second_party_name: body.second_party_name,
          description: body.description ?? null,
          first_party_address: body.first_party_address,
          quantity: 1,
          mock: true,
        });
      }
      // Mock orders are not billed: the user never had a wallet and none was needed.
      expect(await footprint(app, boundary.user_id)).toEqual({ orders: 4, instances: 4, entries: 0 });
    });

    it('takes the state code in any case and an absent description or address as null', async () => {
      const response = await createOrder(app, user.token, {
        ...orderBody({ state_code: 'mh', mock: true }),
        description: undefined,
        first_party_address: undefined,
      });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ state_code: 'MH', description: null, first_party_address: null });
    });
  });

  describe('response shape', () => {
    it('create-order answers the documented keys, stamps empty and no status_counts; order-status adds status_counts', async () => {
      const user = await idle.createUser();
      await credit(idle, user.user_id, 100_000n);
      const response = await createOrder(idle, user.token, orderBody({ quantity: 2, consideration_amount: 2500.5 }));
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status_code: 200, message: 'Success', success: true });
      const created = response.body.data!;
      expect(Object.keys(created).sort()).toEqual(CREATED_ORDER_KEYS);
      expect(created).not.toHaveProperty('status_counts');
      expect(created).toEqual({
        user_id: user.user_id,
        client_id: expect.stringMatching(/^stamp_[0-9a-f]{32}$/),
        created_at: expect.any(String),
        state_code: 'MH',
        first_party_name: 'Asha Rao',
        second_party_name: 'Vikram Singh',
        article_id: 'MH-5',
        stamp_duty_amount: '100',
        consideration_amount: 2500.5,
        description: 'Leave and licence agreement for flat 4B',
        first_party_address: '12 Marine Drive, Mumbai 400020',
        quantity: 2,
        mock: false,
        stamps: [],
      });
      expect(created.client_id.startsWith('stamp_inst_')).toBe(false);
      expect(new Date(created.created_at).toISOString()).toBe(created.created_at);

      const status = await orderStatus(idle, user.token, created.client_id);
      expect(status.status).toBe(200);
      const order = status.body.data!;
      expect(Object.keys(order).sort()).toEqual(ORDER_KEYS);
      expect(Object.keys(order.status_counts!).sort()).toEqual(STATUS_KEYS);
      // Pending instances are counted, not listed.
      // 2 x (100 + 10.00) charged, nothing settled yet.
      expect(order).toEqual({
        ...created,
        status_counts: { pending: 2, available: 0, reserved: 0, used: 0, rejected: 0 },
        status: 'pending',
        net_charged_amount: '220.00',
      });
    });

    it('order-status lists only the instances that left pending, as {stamp_id, status}', async () => {
      const user = await idle.createUser();
      const created = await placeOrder(idle, user.token, orderBody({ quantity: 3, mock: true }));
      // Procurement is not running in this app: move one instance by hand, as a worker would.
      const conn = idle.services.orm.em.fork().getConnection();
      const [moved] = await conn.execute<{ id: string }[]>(
        `update stamp_instances set status = 'available'
          where id = (select id from stamp_instances where order_id = ? order by serial limit 1) returning id`,
        [created.client_id],
      );
      const order = (await orderStatus(idle, user.token, created.client_id)).body.data!;
      expect(order.status_counts).toEqual({ pending: 2, available: 1, reserved: 0, used: 0, rejected: 0 });
      expect(order.status).toBe('processing');
      expect(order.stamps).toEqual([{ stamp_id: moved.id, status: 'available' }]);
      expect(moved.id).toMatch(/^stamp_inst_[0-9a-f]{32}$/);
    });

    it('order-status needs client_id and refuses unknown orders', async () => {
      const user = await app.createUser();
      const missing = await rest(app, 'GET', '/stamps/order-status', { token: user.token });
      expect(missing.status).toBe(400);
      expect(missing.body.message).toBe('missing_fields');
      expect(missing.body.errors).toContainEqual(expect.objectContaining({ field: 'client_id' }));
      const unknown = await orderStatus(app, user.token, `stamp_${'0'.repeat(32)}`);
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ data: null, message: 'not_found', success: false });
    });
  });

  describe('billing', () => {
    it('charges quantity x (duty + fee): 7 x (100 + 10.00) = 770.00, as one ledger row referencing the order', async () => {
      const user = await app.createUser();
      await credit(app, user.user_id, 100_000n);
      const before = await wallet(app, user.token);
      expect(before).toMatchObject({ user_id: user.user_id, balance: '1000.00', currency: 'INR' });

      const order = await placeOrder(app, user.token, orderBody({ quantity: 7 }));
      const after = await wallet(app, user.token);
      expect(Object.keys(after).sort()).toEqual(['balance', 'currency', 'recent_entries', 'user_id']);
      expect(after.balance).toBe('230.00');
      expect(after.recent_entries[0]).toMatchObject({
        kind: 'charge',
        amount: '-770.00',
        balance_after: '230.00',
        reference: order.client_id,
      });
      expect(after.recent_entries[1]).toMatchObject({ kind: 'credit', amount: '1000.00', balance_after: '1000.00' });
      const charges = await ledgerRows(app, user.user_id, 'charge');
      expect(charges).toEqual([
        { kind: 'charge', amount_paise: '-77000', reference: order.client_id, balance_after_paise: '23000' },
      ]);
      expect(await footprint(app, user.user_id)).toEqual({ orders: 1, instances: 7, entries: 2 });

      // A mock order costs nothing and writes no ledger row.
      await placeOrder(app, user.token, orderBody({ quantity: 50, stamp_duty_amount: 1000, mock: true }));
      expect((await wallet(app, user.token)).balance).toBe('230.00');
      expect(await footprint(app, user.user_id)).toEqual({ orders: 2, instances: 57, entries: 2 });

      // 3 x 110 = 330 > 230: refused, nothing created, nothing charged.
      const refused = await createOrder(app, user.token, orderBody({ quantity: 3 }));
      expect(refused.status).toBe(402);
      expect(refused.body).toMatchObject({ data: null, status_code: 402, message: 'insufficient_balance', success: false });
      expect(await footprint(app, user.user_id)).toEqual({ orders: 2, instances: 57, entries: 2 });
      expect((await wallet(app, user.token)).balance).toBe('230.00');

      // Exactly the balance is enough: 2 x 115 = 230.
      await placeOrder(app, user.token, orderBody({ quantity: 2, stamp_duty_amount: 105 }));
      expect((await wallet(app, user.token)).balance).toBe('0.00');
    });

    it('refuses any billed order of a user who never had a wallet', async () => {
      const user = await app.createUser();
      const response = await createOrder(app, user.token, orderBody({ stamp_duty_amount: 1 }));
      expect(response.status).toBe(402);
      expect(response.body.message).toBe('insufficient_balance');
      expect(await footprint(app, user.user_id)).toEqual({ orders: 0, instances: 0, entries: 0 });
      expect(await wallet(app, user.token)).toEqual({
        user_id: user.user_id,
        balance: '0.00',
        currency: 'INR',
        recent_entries: [],
      });
    });

    it('takes the fee from configuration (ESTAMP_FEE_PER_STAMP=2.50)', async () => {
      const user = await rejecting.createUser();
      await credit(rejecting, user.user_id, 10_000n);
      // 4 x (20 + 2.50) = 90.00 (this app's vendor then refuses the stamps; the refunds are tested below).
      const order = await placeOrder(rejecting, user.token, orderBody({ quantity: 4, stamp_duty_amount: 20 }));
      const [charge] = await ledgerRows(rejecting, user.user_id, 'charge');
      expect(charge).toMatchObject({ amount_paise: '-9000', reference: order.client_id });
    });

    it('pages the ledger newest first', async () => {
      const user = await app.createUser();
      for (const paise of [100n, 200n, 300n, 400n, 500n]) await credit(app, user.user_id, paise);
      const pages: LedgerPage[] = [];
      for (let page = 1; page <= 3; page++) {
        const response = await rest<LedgerPage>(app, 'GET', '/wallet/ledger', { token: user.token, query: { page, size: 2 } });
        expect(response.status).toBe(200);
        pages.push(response.body.data!);
      }
      expect(pages.map((page) => page.has_next)).toEqual([true, true, false]);
      expect(pages.flatMap((page) => page.items.map((entry) => entry.amount))).toEqual(['5.00', '4.00', '3.00', '2.00', '1.00']);
      expect(pages[0].items[0]).toMatchObject({ kind: 'credit', balance_after: '15.00', reference: null });
      const beyond = await rest<LedgerPage>(app, 'GET', '/wallet/ledger', { token: user.token, query: { page: 4, size: 2 } });
      expect(beyond.body.data).toEqual({ items: [], has_next: false });

      for (const query of [
        { page: 0, size: 2 },
        { page: 1, size: 0 },
        { page: 1, size: 101 },
        { page: 'x', size: 2 },
      ]) {
        const bad = await rest(app, 'GET', '/wallet/ledger', { token: user.token, query });
        expect(bad.status, JSON.stringify(query)).toBe(400);
        expect(bad.body.message).toBe('bad_request');
      }
    });
  });

  describe('concurrency', () => {
    it('10 concurrent orders against a balance for 3: exactly 3 succeed, the balance ends at 0.00', async () => {
      const user = await app.createUser();
      await credit(app, user.user_id, 3n * 11_000n);
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) => createOrder(app, user.token, orderBody({ first_party_name: `Party ${i}` }))),
      );
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([200, 200, 200, 402, 402, 402, 402, 402, 402, 402]);
      for (const response of responses.filter((r) => r.status === 402)) {
        expect(response.body.message).toBe('insufficient_balance');
      }
      expect((await wallet(app, user.token)).balance).toBe('0.00');
      const charges = await ledgerRows(app, user.user_id, 'charge');
      expect(charges).toHaveLength(3);
      for (const charge of charges) expect(BigInt(charge.balance_after_paise) >= 0n).toBe(true);
      expect(charges.map((charge) => charge.reference).sort()).toEqual(
        responses
          .filter((r) => r.status === 200)
          .map((r) => r.body.data!.client_id)
          .sort(),
      );
      expect(await footprint(app, user.user_id)).toEqual({ orders: 3, instances: 3, entries: 4 });
    });
  });

  describe('Idempotency-Key', () => {
    let user: TestUser;
    let other: TestUser;
    beforeAll(async () => {
      user = await app.createUser();
      other = await app.createUser();
      await credit(app, user.user_id, 100_000n);
      await credit(app, other.user_id, 100_000n);
    });

    it('a sequential retry with the same key returns the first order and charges once', async () => {
      const first = await placeOrder(app, user.token, orderBody(), 'retry-1');
      const second = await placeOrder(app, user.token, orderBody(), 'retry-1');
      expect(second.client_id).toBe(first.client_id);
      expect(await ledgerRows(app, user.user_id, 'charge')).toHaveLength(1);
      expect((await wallet(app, user.token)).balance).toBe('890.00');
    });

    it('5 concurrent requests with one key make one order and one charge', async () => {
      const responses = await Promise.all(
        Array.from({ length: 5 }, () => createOrder(app, user.token, orderBody({ quantity: 2 }), 'burst-1')),
      );
      for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
      const ids = new Set(responses.map((response) => response.body.data!.client_id));
      expect(ids.size).toBe(1);
      const charges = await ledgerRows(app, user.user_id, 'charge');
      expect(charges.filter((charge) => charge.reference === [...ids][0])).toHaveLength(1);
      expect(charges).toHaveLength(2);
      expect((await wallet(app, user.token)).balance).toBe('670.00');
    });

    it('a different key makes a new order; the same key of another user is theirs', async () => {
      const a = await placeOrder(app, user.token, orderBody(), 'retry-1');
      const b = await placeOrder(app, user.token, orderBody(), 'retry-2');
      expect(b.client_id).not.toBe(a.client_id);
      const theirs = await placeOrder(app, other.token, orderBody(), 'retry-1');
      expect(theirs.client_id).not.toBe(a.client_id);
      expect(theirs.user_id).toBe(other.user_id);
      expect((await wallet(app, other.token)).balance).toBe('890.00');
      expect((await wallet(app, user.token)).balance).toBe('560.00');
      expect(await footprint(app, user.user_id)).toMatchObject({ orders: 3 });
    });

    it('a key whose first request was refused can be used again once the request can succeed', async () => {
      const poor = await app.createUser();
      const refused = await createOrder(app, poor.token, orderBody(), 'after-top-up');
      expect(refused.status).toBe(402);
      await credit(app, poor.user_id, 11_000n);
      const accepted = await createOrder(app, poor.token, orderBody(), 'after-top-up');
      expect(accepted.status).toBe(200);
      expect((await wallet(app, poor.token)).balance).toBe('0.00');
    });

    it('refuses a key reused with a different request (409 conflict), and nothing is charged', async () => {
      const first = await placeOrder(app, user.token, orderBody(), 'reuse-1');
      const before = (await wallet(app, user.token)).balance;
      // The same request spelled differently is still the same request.
      const again = await placeOrder(app, user.token, orderBody({ state_code: ' mh ', article_id: 'mh-5' }), 'reuse-1');
      expect(again.client_id).toBe(first.client_id);
      const other = await createOrder(app, user.token, orderBody({ quantity: 2 }), 'reuse-1');
      expect(other.status).toBe(409);
      expect(other.body).toMatchObject({ data: null, status_code: 409, success: false });
      expect(other.body.errors).toContainEqual(expect.objectContaining({ field: 'Idempotency-Key' }));
      expect((await wallet(app, user.token)).balance).toBe(before);
    });

    it('refuses a key longer than 200 characters', async () => {
      const response = await createOrder(app, user.token, orderBody(), 'k'.repeat(201));
      expect(response.status).toBe(400);
      expect(response.body.message).toBe('bad_request');
      expect(response.body.errors).toContainEqual(expect.objectContaining({ field: 'Idempotency-Key' }));
    });
  });

  describe('procurement', () => {
    it('makes every instance available with a one-page certificate PDF behind a short-lived link', async () => {
      const user = await app.createUser();
      const stranger = await app.createUser();
      await credit(app, user.user_id, 100_000n);
      const created = await placeOrder(
        app,
        user.token,
        orderBody({ quantity: 3, first_party_name: 'Meera Iyer', second_party_name: 'Rohan Kapoor' }),
      );
      expect(created.stamps).toEqual([]);
      const order = await waitForOrder(app, user.token, created.client_id, (o) => o.status_counts!.available === 3);
      expect(order.status_counts).toEqual({ pending: 0, available: 3, reserved: 0, used: 0, rejected: 0 });
      expect(order).toMatchObject({ status: 'completed', net_charged_amount: '330.00' });
      expect(order.stamps).toHaveLength(3);
      for (const stamp of order.stamps) {
        expect(stamp).toEqual({ stamp_id: expect.stringMatching(/^stamp_inst_[0-9a-f]{32}$/), status: 'available' });
      }
      expect(new Set(order.stamps.map((stamp) => stamp.stamp_id)).size).toBe(3);

      const read = await gql(app, user.token, StampOrdersReadDocument, { client_id: created.client_id });
      const certificate = read.data!.stampOrder.stamps.find((s) => s.stamp_id === order.stamps[0].stamp_id)!.certificate_number!;
      expect(certificate).toMatch(/^IN-MH\d+$/);

      const download = await rest<{ stamp_id: string; url: string; expires_in: number; page_count: number }>(
        app,
        'GET',
        '/stamps/download-pdf',
        { token: user.token, query: { client_id: order.stamps[0].stamp_id } },
      );
      expect(download.status).toBe(200);
      const link = download.body.data!;
      expect(Object.keys(link).sort()).toEqual(['expires_in', 'page_count', 'stamp_id', 'url']);
      expect(link).toMatchObject({ stamp_id: order.stamps[0].stamp_id, expires_in: 300, page_count: 1 });
      expect(Number.isInteger(link.expires_in)).toBe(true);
      expect(link.url.startsWith(`${app.url}/downloads/`)).toBe(true);

      const fetched = await fetch(link.url);
      expect(fetched.status).toBe(200);
      expect(fetched.headers.get('content-type')).toMatch(/^application\/pdf/);
      const bytes = new Uint8Array(await fetched.arrayBuffer());
      expect(Buffer.from(bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
      const pdf = await PDFDocument.load(bytes);
      expect(pdf.getPageCount()).toBe(1);
      expect(pdf.getTitle()).toContain(certificate);
      const text = pageText(pdf);
      for (const expected of [
        certificate,
        'Maharashtra',
        'Meera Iyer',
        'Rohan Kapoor',
        'MH-5',
        '100.00',
        '5000.00',
        '12 Marine Drive, Mumbai 400020',
        created.client_id,
      ]) {
        expect(text).toContain(expected);
      }

      // Only instance ids of the caller's procured stamps open a link.
      for (const clientId of [created.client_id, `stamp_inst_${'0'.repeat(32)}`, 'nonsense']) {
        const notFound = await rest(app, 'GET', '/stamps/download-pdf', { token: user.token, query: { client_id: clientId } });
        expect(notFound.status, clientId).toBe(404);
        expect(notFound.body).toMatchObject({ data: null, message: 'not_found', success: false });
      }
      const foreign = await rest(app, 'GET', '/stamps/download-pdf', {
        token: stranger.token,
        query: { client_id: order.stamps[0].stamp_id },
      });
      expect(foreign.status).toBe(404);
      expect(foreign.body.message).toBe('not_found');
      const missing = await rest(app, 'GET', '/stamps/download-pdf', { token: user.token });
      expect(missing.status).toBe(400);
      expect(missing.body.message).toBe('missing_fields');
      expect(missing.body.errors).toContainEqual(expect.objectContaining({ field: 'client_id' }));

      // Procurement changed nothing in the wallet: one charge, no refund.
      expect((await ledgerRows(app, user.user_id)).map((row) => row.kind)).toEqual(['credit', 'charge']);
    });

    it('a mock order is procured by the mock vendor, free of charge', async () => {
      const user = await app.createUser();
      const created = await placeOrder(app, user.token, orderBody({ quantity: 2, mock: true }));
      const order = await waitForOrder(app, user.token, created.client_id, (o) => o.status_counts!.available === 2);
      expect(order.stamps.map((stamp) => stamp.status)).toEqual(['available', 'available']);
      const read = await gql(app, user.token, StampOrdersReadDocument, { client_id: created.client_id });
      expect(read.data!.stampOrder).toMatchObject({ charged_amount: '0.00', net_charged_amount: '0.00', status: 'completed' });
      for (const stamp of read.data!.stampOrder.stamps) expect(stamp.certificate_number).toMatch(/^MOCK-MH\d+$/);
      expect(await footprint(app, user.user_id)).toEqual({ orders: 1, instances: 2, entries: 0 });
    });

    it('a pending stamp has no certificate to download yet', async () => {
      const user = await idle.createUser();
      const created = await placeOrder(idle, user.token, orderBody({ mock: true }));
      const [pending] = await idle.services.orm.em
        .fork()
        .getConnection()
        .execute<{ id: string }[]>('select id from stamp_instances where order_id = ?', [created.client_id]);
      const response = await rest(idle, 'GET', '/stamps/download-pdf', { token: user.token, query: { client_id: pending.id } });
      expect(response.status).toBe(404);
      expect(response.body.message).toBe('not_found');
    });

    it('refunds duty and fee of every instance the vendor rejects; the balance returns to where it was', async () => {
      const user = await rejecting.createUser();
      await credit(rejecting, user.user_id, 100_000n);
      const created = await placeOrder(rejecting, user.token, orderBody({ quantity: 3 }));
      // 3 x (100 + 2.50)
      expect((await wallet(rejecting, user.token)).balance).toBe('692.50');
      const order = await waitForOrder(rejecting, user.token, created.client_id, (o) => o.status_counts!.rejected === 3);
      expect(order.status_counts).toEqual({ pending: 0, available: 0, reserved: 0, used: 0, rejected: 3 });
      // Every stamp refused and refunded: the order failed and costs nothing.
      expect(order).toMatchObject({ status: 'failed', net_charged_amount: '0.00' });
      const overGraphQL = await gql(rejecting, user.token, StampOrdersReadDocument, { client_id: created.client_id });
      expect(overGraphQL.data!.stampOrder).toMatchObject({
        charged_amount: '307.50',
        net_charged_amount: '0.00',
        status: 'failed',
      });
      expect(order.stamps).toHaveLength(3);
      for (const stamp of order.stamps) expect(stamp.status).toBe('rejected');

      const refunds = await ledgerRows(rejecting, user.user_id, 'refund');
      expect(refunds).toHaveLength(3);
      for (const refund of refunds) expect(refund.amount_paise).toBe('10250');
      expect(refunds.map((refund) => refund.reference).sort()).toEqual(order.stamps.map((stamp) => stamp.stamp_id).sort());
      const after = await wallet(rejecting, user.token);
      expect(after.balance).toBe('1000.00');
      expect(after.recent_entries.slice(0, 3).map((entry) => [entry.kind, entry.amount])).toEqual([
        ['refund', '102.50'],
        ['refund', '102.50'],
        ['refund', '102.50'],
      ]);

      // A rejected stamp has no certificate.
      const download = await rest(rejecting, 'GET', '/stamps/download-pdf', {
        token: user.token,
        query: { client_id: order.stamps[0].stamp_id },
      });
      expect(download.status).toBe(404);
    });

    it('some stamps refused: partially_failed, and net_charged_amount is what the wallet paid after refunds', async () => {
      const user = await idle.createUser();
      await credit(idle, user.user_id, 100_000n);
      const created = await placeOrder(idle, user.token, orderBody({ quantity: 6 }));
      expect((await wallet(idle, user.token)).balance).toBe('340.00');
      // A vendor that refuses odd serials and issues even ones; procurement run by hand (this app runs no jobs).
      const issuer = new SimulatedVendor({ latencyMs: 0, rejectionRate: 0 });
      const halfRefusing: StampVendor = {
        name: 'half-refusing',
        procure: async (request, signal) =>
          request.serial % 2 === 1 ? { kind: 'rejected', reason: 'refused for the test' } : issuer.procure(request, signal),
      };
      expect(await procureBatch(idle.services, created.client_id, halfRefusing)).toBe(6);
      const order = (await orderStatus(idle, user.token, created.client_id)).body.data!;
      expect(order.status_counts).toEqual({ pending: 0, available: 3, reserved: 0, used: 0, rejected: 3 });
      // Charged 6 x 110.00 = 660.00, refunded 3 x 110.00: 330.00, which is what left the wallet.
      expect(order).toMatchObject({ status: 'partially_failed', net_charged_amount: '330.00' });
      expect((await wallet(idle, user.token)).balance).toBe('670.00');
      const overGraphQL = await gql(idle, user.token, StampOrdersReadDocument, { client_id: created.client_id });
      expect(overGraphQL.data!.stampOrder).toMatchObject({ charged_amount: '660.00', net_charged_amount: '330.00' });
      const listed = await rest<{ items: OrderJson[] }>(idle, 'GET', '/stamps/list', {
        token: user.token,
        query: { page: 1, size: 10 },
      });
      expect(listed.body.data!.items[0]).toMatchObject({ status: 'partially_failed', net_charged_amount: '330.00' });
    });

    it('a rejected mock order would refund nothing: mock orders are never charged', async () => {
      const user = await rejecting.createUser();
      const created = await placeOrder(rejecting, user.token, orderBody({ quantity: 2, mock: true }));
      // The mock vendor never refuses, whatever the simulated vendor's rejection rate.
      const order = await waitForOrder(rejecting, user.token, created.client_id, (o) => o.status_counts!.available === 2);
      expect(order.status_counts!.rejected).toBe(0);
      expect(await footprint(rejecting, user.user_id)).toEqual({ orders: 1, instances: 2, entries: 0 });
    });
  });

  describe('list', () => {
    let user: TestUser;
    let other: TestUser;
    let orders: OrderJson[];

    beforeAll(async () => {
      user = await app.createUser();
      other = await app.createUser();
      orders = [];
      for (const [state_code, article_id] of [
        ['MH', 'MH-5'],
        ['KA', 'KA-20'],
        ['MH', 'MH-4'],
        ['DL', 'DL-4'],
        ['MH', 'MH-5'],
      ]) {
        orders.push(await placeOrder(app, user.token, orderBody({ state_code, article_id, mock: true })));
      }
      await placeOrder(app, other.token, orderBody({ mock: true }));
      for (const order of orders) {
        await waitForOrder(app, user.token, order.client_id, (o) => o.status_counts!.available === 1);
      }
    });

    async function list(query: Record<string, string | number>, token = user.token) {
      return rest<{ items: OrderJson[]; has_next: boolean }>(app, 'GET', '/stamps/list', { token, query });
    }

    async function listIds(query: Record<string, string | number>, token = user.token): Promise<string[]> {
      const response = await list({ page: 1, size: 100, ...query }, token);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.data!.items.map((item) => item.client_id);
    }

    const ids = (...indexes: number[]) => indexes.map((i) => orders[i].client_id);

    it('pages newest first with has_next', async () => {
      const pages = [];
      for (let page = 1; page <= 3; page++) {
        const response = await list({ page, size: 2 });
        expect(response.status).toBe(200);
        expect(Object.keys(response.body.data!).sort()).toEqual(['has_next', 'items']);
        pages.push(response.body.data!);
      }
      expect(pages.map((page) => page.items.map((item) => item.client_id))).toEqual([ids(4, 3), ids(2, 1), ids(0)]);
      expect(pages.map((page) => page.has_next)).toEqual([true, true, false]);
      const item = pages[0].items[0];
      expect(Object.keys(item).sort()).toEqual(ORDER_KEYS);
      expect(item.status_counts).toEqual({ pending: 0, available: 1, reserved: 0, used: 0, rejected: 0 });
      expect(item.stamps).toEqual([{ stamp_id: expect.stringMatching(/^stamp_inst_/), status: 'available' }]);
      expect(await listIds({ page: 2, size: 5 })).toEqual([]);
    });

    it('filters by client_id, state_code (any case) and article_id', async () => {
      expect(await listIds({ client_id: orders[1].client_id })).toEqual(ids(1));
      expect(await listIds({ state_code: 'MH' })).toEqual(ids(4, 2, 0));
      expect(await listIds({ state_code: 'mh' })).toEqual(ids(4, 2, 0));
      expect(await listIds({ state_code: 'MH', article_id: 'MH-5' })).toEqual(ids(4, 0));
      expect(await listIds({ state_code: 'KA', article_id: 'KA-20' })).toEqual(ids(1));
      expect(await listIds({ state_code: 'TN' })).toEqual([]);
      expect(await listIds({ state_code: 'MH', client_id: orders[1].client_id })).toEqual([]);
    });

    it('filters by status: orders with an instance in that status', async () => {
      expect(await listIds({ status: 'available' })).toEqual(ids(4, 3, 2, 1, 0));
      expect(await listIds({ status: 'pending' })).toEqual([]);
      expect(await listIds({ status: 'rejected' })).toEqual([]);
      expect(await listIds({ status: 'available', client_id: orders[2].client_id })).toEqual(ids(2));
      expect(await listIds({ status: 'rejected', client_id: orders[2].client_id })).toEqual([]);
    });

    it('with status=pending shows empty stamps and the pending count; status narrows the listed stamps', async () => {
      const waiting = await idle.createUser();
      const order = await placeOrder(idle, waiting.token, orderBody({ quantity: 4, mock: true }));
      const pendingList = await rest<{ items: OrderJson[]; has_next: boolean }>(idle, 'GET', '/stamps/list', {
        token: waiting.token,
        query: { page: 1, size: 10, status: 'pending' },
      });
      expect(pendingList.status).toBe(200);
      expect(pendingList.body.data!.has_next).toBe(false);
      expect(pendingList.body.data!.items).toHaveLength(1);
      expect(pendingList.body.data!.items[0]).toMatchObject({
        client_id: order.client_id,
        stamps: [],
        status_counts: { pending: 4, available: 0, reserved: 0, used: 0, rejected: 0 },
      });

      // One instance available, one rejected (set by hand: no worker runs in this app).
      const conn = idle.services.orm.em.fork().getConnection();
      const instances = await conn.execute<{ id: string }[]>(
        'select id from stamp_instances where order_id = ? order by serial',
        [order.client_id],
      );
      await conn.execute(`update stamp_instances set status = 'available' where id = ?`, [instances[0].id]);
      await conn.execute(`update stamp_instances set status = 'rejected' where id = ?`, [instances[1].id]);
      const byStatus = async (status: string) => {
        const response = await rest<{ items: OrderJson[] }>(idle, 'GET', '/stamps/list', {
          token: waiting.token,
          query: { page: 1, size: 10, status },
        });
        expect(response.status).toBe(200);
        return response.body.data!.items;
      };
      const [available] = await byStatus('available');
      expect(available.stamps).toEqual([{ stamp_id: instances[0].id, status: 'available' }]);
      expect(available.status_counts).toEqual({ pending: 2, available: 1, reserved: 0, used: 0, rejected: 1 });
      const [rejected] = await byStatus('rejected');
      expect(rejected.stamps).toEqual([{ stamp_id: instances[1].id, status: 'rejected' }]);
      const [pending] = await byStatus('pending');
      expect(pending.stamps).toEqual([]);
      expect(pending.status_counts!.pending).toBe(2);
      expect(await byStatus('used')).toEqual([]);
      // Without a status filter, every instance that left pending is listed.
      const all = (
        await rest<{ items: OrderJson[] }>(idle, 'GET', '/stamps/list', {
          token: waiting.token,
          query: { page: 1, size: 10 },
        })
      ).body.data!.items;
      expect(all[0].stamps.map((stamp) => stamp.status)).toEqual(['available', 'rejected']);
    });

    it('refuses bad filters and paging arguments', async () => {
      const cases: [Record<string, string | number>, number, string, string][] = [
        [{ page: 1, size: 10, article_id: 'MH-5' }, 400, 'missing_fields', 'state_code'],
        [{ page: 1, size: 10, state_code: 'MH', article_id: 'KA-20' }, 400, 'invalid_article_id', 'article_id'],
        [{ page: 1, size: 10, state_code: 'MH', article_id: 'MH-9999' }, 400, 'invalid_article_id', 'article_id'],
        [{ page: 1, size: 10, state_code: 'ZZ' }, 400, 'invalid_state_code', 'state_code'],
        [{ page: 1, size: 10, status: 'done' }, 400, 'bad_request', 'status'],
        [{ page: 0, size: 10 }, 400, 'bad_request', 'page'],
        [{ page: -1, size: 10 }, 400, 'bad_request', 'page'],
        [{ page: 1, size: 0 }, 400, 'bad_request', 'size'],
        [{ page: 1, size: 101 }, 400, 'bad_request', 'size'],
      ];
      for (const [query, status, message, field] of cases) {
        const response = await list(query);
        expect(response.status, JSON.stringify(query)).toBe(status);
        expect(response.body).toMatchObject({ data: null, message, success: false });
        expect(response.body.errors, JSON.stringify(response.body)).toContainEqual(expect.objectContaining({ field }));
      }
      // Not whole numbers: refused by the REST layer's type check, naming the parameter.
      for (const [query, field] of [
        [{ page: 'one', size: 10 }, 'page'],
        [{ page: 1.5, size: 10 }, 'page'],
        [{ page: 1, size: 'ten' }, 'size'],
      ] as const) {
        const response = await list(query);
        expect(response.status, JSON.stringify(query)).toBe(400);
        expect(response.body).toMatchObject({ data: null, message: 'bad_request', success: false });
        expect(response.body.errors?.map((e) => e.field)).toEqual([field]);
      }
      const noPage = await rest(app, 'GET', '/stamps/list', { token: user.token, query: { size: 10 } });
      expect(noPage.status).toBe(400);
      expect(noPage.body.errors).toContainEqual(expect.objectContaining({ field: 'page' }));
      expect(await listIds({ size: 100 }, user.token)).toHaveLength(5);
    });
  });

  describe('isolation', () => {
    let owner: TestUser;
    let stranger: TestUser;
    let order: OrderJson;
    beforeAll(async () => {
      owner = await app.createUser();
      stranger = await app.createUser();
      order = await placeOrder(app, owner.token, orderBody({ mock: true }));
    });

    it("another user's order is 404 not_found and never listed", async () => {
      const foreign = await orderStatus(app, stranger.token, order.client_id);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toMatchObject({ data: null, status_code: 404, message: 'not_found', success: false });
      const listed = await rest<{ items: OrderJson[]; has_next: boolean }>(app, 'GET', '/stamps/list', {
        token: stranger.token,
        query: { page: 1, size: 100 },
      });
      expect(listed.body.data).toEqual({ items: [], has_next: false });
      const byId = await rest<{ items: OrderJson[] }>(app, 'GET', '/stamps/list', {
        token: stranger.token,
        query: { page: 1, size: 100, client_id: order.client_id },
      });
      expect(byId.body.data!.items).toEqual([]);
      const gqlForeign = await gql(app, stranger.token, StampOrdersReadDocument, { client_id: order.client_id });
      expect(gqlForeign.errors?.[0].extensions?.code).toBe('not_found');
    });

    const ROUTES: [string, string, Record<string, string | number>?, unknown?][] = [
      ['GET', '/stamps/states'],
      ['GET', '/stamps/articles', { state_code: 'MH' }],
      ['POST', '/stamps/create-order', undefined, orderBody({ mock: true })],
      ['GET', '/stamps/order-status', { client_id: 'stamp_x' }],
      ['GET', '/stamps/list', { page: 1, size: 10 }],
      ['GET', '/stamps/download-pdf', { client_id: 'stamp_inst_x' }],
      ['GET', '/wallet'],
      ['GET', '/wallet/ledger', { page: 1, size: 10 }],
    ];

    it.each(ROUTES)('%s %s without a valid token is 401 unauthorized', async (method, path, query, json) => {
      for (const auth of [{ token: 'esk_not_a_real_token' }, { token: null }, { authorization: 'Basic abc' }]) {
        const response = await rest(app, method, path, { ...auth, query, json });
        expect(response.status, JSON.stringify(auth)).toBe(401);
        expect(response.body).toMatchObject({ data: null, status_code: 401, message: 'unauthorized', success: false });
      }
    });

    it('creates nothing for a request without a valid token', async () => {
      const before = await app.services.orm.em
        .fork()
        .getConnection()
        .execute<{ n: number }[]>('select count(*)::int as n from stamp_orders');
      await rest(app, 'POST', '/stamps/create-order', { token: 'esk_bogus', json: orderBody({ mock: true }) });
      const after = await app.services.orm.em
        .fork()
        .getConnection()
        .execute<{ n: number }[]>('select count(*)::int as n from stamp_orders');
      expect(after[0].n).toBe(before[0].n);
    });

    it('GraphQL without a valid token is 401', async () => {
      const response = await gql(app, 'esk_not_a_real_token', StampOrdersWalletDocument);
      expect(response.status).toBe(401);
    });
  });

  describe('GraphQL', () => {
    let user: TestUser;
    beforeAll(async () => {
      user = await app.createUser();
      await credit(app, user.user_id, 50_000n);
    });

    it('createStampOrder honours idempotency_key and answers with empty stamps', async () => {
      const variables = {
        state_code: 'KA',
        first_party_name: 'Kavya Nair',
        second_party_name: 'Arjun Rao',
        article_id: 'KA-20',
        stamp_duty_amount: 200,
        consideration_amount: 150000,
        quantity: 2,
        idempotency_key: 'gql-1',
      };
      const first = await gql(app, user.token, StampOrdersCreateDocument, variables);
      expect(first.errors).toBeUndefined();
      expect(first.data!.createStampOrder).toMatchObject({
        user_id: user.user_id,
        state_code: 'KA',
        article_id: 'KA-20',
        stamp_duty_amount: '200',
        consideration_amount: 150000,
        quantity: 2,
        mock: false,
        charged_amount: '420.00',
        stamps: [],
      });
      const again = await gql(app, user.token, StampOrdersCreateDocument, variables);
      expect(again.data!.createStampOrder.client_id).toBe(first.data!.createStampOrder.client_id);
      expect(await ledgerRows(app, user.user_id, 'charge')).toHaveLength(1);

      const walletRead = await gql(app, user.token, StampOrdersWalletDocument);
      expect(walletRead.errors).toBeUndefined();
      expect(walletRead.data!.wallet).toMatchObject({ user_id: user.user_id, balance: '80.00', currency: 'INR' });
      expect(walletRead.data!.wallet.recent_entries.map((entry) => [entry.kind, entry.amount])).toEqual([
        ['charge', '-420.00'],
        ['credit', '500.00'],
      ]);
      expect(walletRead.data!.wallet.recent_entries[0].reference).toBe(first.data!.createStampOrder.client_id);
    });

    it('stampOrder reads stamps with their certificate, PDF file and order, and the status counts', async () => {
      const created = await gql(app, user.token, StampOrdersCreateDocument, {
        state_code: 'DL',
        first_party_name: 'Neha Gupta',
        second_party_name: 'Sanjay Verma',
        article_id: 'DL-35',
        stamp_duty_amount: 50,
        consideration_amount: 24000,
        quantity: 2,
        mock: true,
      });
      const clientId = created.data!.createStampOrder.client_id;
      await waitForOrder(app, user.token, clientId, (o) => o.status_counts!.available === 2);
      const read = await gql(app, user.token, StampOrdersReadDocument, { client_id: clientId });
      expect(read.errors).toBeUndefined();
      const order = read.data!.stampOrder;
      expect(order).toMatchObject({
        client_id: clientId,
        quantity: 2,
        charged_amount: '0.00',
        status_counts: { pending: 0, available: 2, reserved: 0, used: 0, rejected: 0 },
      });
      expect(order.stamps).toHaveLength(2);
      for (const stamp of order.stamps) {
        expect(stamp).toMatchObject({
          stamp_id: expect.stringMatching(/^stamp_inst_/),
          status: 'available',
          certificate_number: expect.stringMatching(/^MOCK-DL\d+$/),
          issued_at: expect.any(String),
          pdf_file: { client_id: expect.stringMatching(/^file_/), kind: 'pdf', mime: 'application/pdf', page_count: 1 },
          order: { client_id: clientId },
        });
      }
    });

    it('carries the error codes in extensions.code', async () => {
      const base = {
        state_code: 'MH',
        first_party_name: 'A',
        second_party_name: 'B',
        article_id: 'MH-5',
        stamp_duty_amount: 100,
        consideration_amount: 1,
        quantity: 1,
      };
      const cases: [StampOrdersCreateMutationVariables, string, string | null][] = [
        [{ ...base, quantity: 0 }, 'bad_request', 'quantity'],
        [{ ...base, stamp_duty_amount: 12.5 }, 'bad_request', 'stamp_duty_amount'],
        [{ ...base, first_party_name: null }, 'missing_fields', 'first_party_name'],
        [{ ...base, state_code: 'ZZ' }, 'invalid_state_code', 'state_code'],
        [{ ...base, article_id: 'KA-20' }, 'invalid_article_id', 'article_id'],
        [{ ...base, quantity: 5000 }, 'insufficient_balance', null],
      ];
      for (const [variables, code, field] of cases) {
        const response = await gql(app, user.token, StampOrdersCreateDocument, variables);
        expect(response.data ?? null, JSON.stringify(variables)).toBeNull();
        expect(response.errors?.[0].extensions?.code, JSON.stringify(response.errors)).toBe(code);
        if (field) {
          expect(response.errors![0].extensions!.errors).toContainEqual(expect.objectContaining({ field }));
        }
      }
      const unknown = await gql(app, user.token, StampOrdersReadDocument, { client_id: `stamp_${'f'.repeat(32)}` });
      expect(unknown.errors?.[0].extensions?.code).toBe('not_found');
      const articles = await gql(app, user.token, StampOrdersArticlesDocument, { state_code: 'ZZ' });
      expect(articles.errors?.[0].extensions?.code).toBe('invalid_state_code');
      const noState = await gql(app, user.token, StampOrdersArticlesDocument, {});
      expect(noState.errors?.[0].extensions?.code).toBe('missing_fields');
      const ka = await gql(app, user.token, StampOrdersArticlesDocument, { state_code: 'ka' });
      expect(ka.data!.stampArticles.map((article) => article.article_id)).toContain('KA-20');
      expect(await ledgerRows(app, user.user_id, 'charge')).toHaveLength(1);
    });
  });
});
