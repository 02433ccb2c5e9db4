/**
 * Money beyond the CLI (issue 22): an admin-scope access token credits and debits any wallet, reads any ledger and
 * user, sets a user's fee per stamp and reads the account's audit trail, on both faces, against a real app and
 * database. Every admin action is in the ledger and the audit trail with the admin's user and token; a debit never
 * takes a balance below zero, however many race; a user's own token gets `403 forbidden` on every admin operation.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessToken, revokeAccessToken } from '../../src/modules/users/access-tokens';
import { creditWallet } from '../../src/modules/wallet/credit-wallet';
import {
  AdminAuditTrailDocument,
  AdminCreditWalletDocument,
  AdminDebitWalletDocument,
  AdminSetStampFeeDocument,
  AdminUserDocument,
  AdminWalletLedgerDocument,
} from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql, rest, type RestResponse } from '../helpers/clients';
import { createStampOrder } from '../helpers/factories';
import { WebhookReceiver, type Received } from '../helpers/webhook-receiver';

// Answers are checked field by field against what each operation documents.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const UNKNOWN_USER = 'user_00000000000000000000000000000000';

describe('admin operations', () => {
  let app: TestApp;
  let db: pg.Client;
  /** The admin's own user, and an admin-scope token of it (the CLI's `tokens create --scope admin`). */
  let adminUser: TestUser;
  let admin: { token: string; token_id: string };
  let owner: TestUser;
  const receiver = new WebhookReceiver();

  const adminRest = <T = Json>(method: string, path: string, options: { query?: Json; json?: Json } = {}) =>
    rest<T>(app, method, path, { token: admin.token, ...options, headers: { 'user-agent': 'admin-console/1.0' } });

  const credit = (userId: string, amount: string | number, description = 'goodwill credit') =>
    adminRest('POST', '/admin/wallet/credit', { json: { user_id: userId, amount, description } });
  const debit = (userId: string, amount: string | number, description = 'correction') =>
    adminRest('POST', '/admin/wallet/debit', { json: { user_id: userId, amount, description } });

  const count = async (sql: string, params: unknown[]) => Number((await db.query<{ n: string }>(sql, params)).rows[0].n);
  const balanceOf = async (userId: string) =>
    (await db.query<{ balance_paise: string }>('select balance_paise from wallets where user_id = $1', [userId])).rows[0]
      ?.balance_paise ?? '0';
  /** What a refused call must leave as it was. */
  const footprint = async (userId: string) => ({
    balance: await balanceOf(userId),
    entries: await count('select count(*) as n from wallet_entries where user_id = $1', [userId]),
    audit: await count('select count(*) as n from account_audit_events where subject_user_id = $1', [userId]),
    fee: (await db.query('select stamp_fee_paise from users where id = $1', [userId])).rows[0]?.stamp_fee_paise ?? null,
  });

  beforeAll(async () => {
    await receiver.start();
    // The simulated vendor rejects nothing here: a refund would come between an order and the ledger read.
    app = await startTestApp({
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', ESTAMP_FEE_PER_STAMP: '10.00', STAMP_VENDOR_REJECTION_RATE: '0' },
    });
    db = new pg.Client({ connectionString: app.databaseUrl });
    await db.connect();
    adminUser = await app.createUser('admin@example.com');
    admin = await issueAccessToken(app.services.orm.em.fork(), adminUser.user_id, { scope: 'admin', label: 'ops' });
    owner = await app.createUser('owner@example.com');
  });

  afterAll(async () => {
    await db?.end();
    await app?.close();
    await receiver.stop();
  });

  describe('crediting and debiting any wallet', () => {
    it('REST: a credit is a ledger row and an audit row naming the admin, and the owner sees it in their ledger', async () => {
      const answer = await credit(owner.user_id, '500.50', 'goodwill: outage of 12 November');
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const data = answer.body.data;
      expect(data).toEqual({
        user_id: owner.user_id,
        balance: '500.50',
        currency: 'INR',
        entry: {
          entry_id: expect.stringMatching(/^wle_/),
          kind: 'credit',
          amount: '500.50',
          balance_after: '500.50',
          description: 'goodwill: outage of 12 November',
          reference: null,
          performed_by: adminUser.user_id,
          created_at: expect.any(String),
        },
      });

      const row = (await db.query('select * from wallet_entries where id = $1', [data.entry.entry_id])).rows[0];
      expect(row).toMatchObject({
        user_id: owner.user_id,
        kind: 'credit',
        amount_paise: '50050',
        actor_user_id: adminUser.user_id,
        actor_token_id: admin.token_id,
      });
      const audit = (
        await db.query("select * from account_audit_events where subject_user_id = $1 and action = 'wallet_credited'", [
          owner.user_id,
        ])
      ).rows;
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({
        actor_user_id: adminUser.user_id,
        actor_token_id: admin.token_id,
        user_agent: 'admin-console/1.0',
        details: {
          entry_id: data.entry.entry_id,
          amount: '500.50',
          balance_after: '500.50',
          description: 'goodwill: outage of 12 November',
        },
      });
      expect(audit[0].ip).toMatch(/127\.0\.0\.1/);

      const ledger = await rest<Json>(app, 'GET', '/wallet/ledger', { token: owner.token });
      expect(ledger.body.data.items[0]).toEqual(data.entry);
    });

    it('REST: a debit takes money away as a `debit` row (negative), distinct from charges', async () => {
      const before = BigInt(await balanceOf(owner.user_id));
      const answer = await debit(owner.user_id, 100, 'duplicate credit reversed');
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.data).toMatchObject({
        user_id: owner.user_id,
        balance: formatPaise(before - 10_000n),
        entry: { kind: 'debit', amount: '-100.00', performed_by: adminUser.user_id, description: 'duplicate credit reversed' },
      });
      const row = (await db.query('select * from wallet_entries where id = $1', [answer.body.data.entry.entry_id])).rows[0];
      expect(row).toMatchObject({ kind: 'debit', amount_paise: '-10000', actor_token_id: admin.token_id });
      expect(
        await count("select count(*) as n from account_audit_events where subject_user_id = $1 and action = 'wallet_debited'", [
          owner.user_id,
        ]),
      ).toBe(1);
    });

    it('GraphQL: the same operations, the same rows', async () => {
      const user = await app.createUser();
      const credited = await gql(app, admin.token, AdminCreditWalletDocument, {
        user_id: user.user_id,
        amount: 250,
        description: 'opening balance',
      });
      expect(credited.errors).toBeUndefined();
      expect(credited.data?.adminCreditWallet).toMatchObject({
        user_id: user.user_id,
        balance: '250.00',
        entry: { kind: 'credit', amount: '250.00', performed_by: adminUser.user_id },
      });
      const debited = await gql(app, admin.token, AdminDebitWalletDocument, {
        user_id: user.user_id,
        amount: '99.99',
        description: 'fee correction',
      });
      expect(debited.errors).toBeUndefined();
      expect(debited.data?.adminDebitWallet).toMatchObject({
        balance: '150.01',
        entry: { kind: 'debit', amount: '-99.99', balance_after: '150.01', performed_by: adminUser.user_id },
      });
      const rows = (
        await db.query('select kind, actor_user_id, actor_token_id from wallet_entries where user_id = $1 order by seq', [
          user.user_id,
        ])
      ).rows;
      expect(rows).toEqual([
        { kind: 'credit', actor_user_id: adminUser.user_id, actor_token_id: admin.token_id },
        { kind: 'debit', actor_user_id: adminUser.user_id, actor_token_id: admin.token_id },
      ]);

      const ledger = await gql(app, admin.token, AdminWalletLedgerDocument, { user_id: user.user_id, size: 1 });
      expect(ledger.errors).toBeUndefined();
      expect(ledger.data?.adminWalletLedger).toMatchObject({
        user_id: user.user_id,
        balance: '150.01',
        currency: 'INR',
        items: [{ kind: 'debit', amount: '-99.99' }],
        has_next: true,
      });
    });

    it('a debit beyond the balance is 402 insufficient_balance and changes nothing, on both faces', async () => {
      const user = await app.createUser();
      expect((await credit(user.user_id, 10)).status).toBe(200);
      const before = await footprint(user.user_id);
      const refused = await debit(user.user_id, '10.01');
      expect(refused.status).toBe(402);
      expect(refused.body).toMatchObject({ data: null, status_code: 402, message: 'insufficient_balance', success: false });
      const graphql = await gql(app, admin.token, AdminDebitWalletDocument, {
        user_id: user.user_id,
        amount: 11,
        description: 'too much',
      });
      expect(graphql.errors?.[0]?.extensions?.code).toBe('insufficient_balance');
      expect(graphql.data).toBeNull();
      // A wallet that was never credited has nothing to take either.
      const empty = await app.createUser();
      expect((await debit(empty.user_id, 1)).status).toBe(402);
      expect(await footprint(user.user_id)).toEqual(before);
      expect(await footprint(empty.user_id)).toEqual({ balance: '0', entries: 0, audit: 0, fee: null });
    });

    it('racing debits never take a wallet below zero: of 20 debits of 15.00 from 100.00, exactly 6 pass', async () => {
      const user = await app.createUser();
      expect((await credit(user.user_id, 100)).status).toBe(200);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0
            ? debit(user.user_id, 15, `race ${i}`)
            : gql(app, admin.token, AdminDebitWalletDocument, { user_id: user.user_id, amount: 15, description: `race ${i}` }),
        ),
      );
      const passed = answers.filter((answer) => ('body' in answer ? answer.status === 200 : !answer.errors));
      const refused = answers.filter((answer) =>
        'body' in answer
          ? (answer as RestResponse).status === 402 && (answer as RestResponse).body.message === 'insufficient_balance'
          : answer.errors?.[0]?.extensions?.code === 'insufficient_balance',
      );
      expect(passed).toHaveLength(6);
      expect(refused).toHaveLength(14);
      expect(await balanceOf(user.user_id)).toBe('1000');
      const debits = (
        await db.query<{ balance_after_paise: string }>(
          "select balance_after_paise from wallet_entries where user_id = $1 and kind = 'debit' order by seq",
          [user.user_id],
        )
      ).rows.map((row) => row.balance_after_paise);
      expect(debits).toEqual(['8500', '7000', '5500', '4000', '2500', '1000']);
      expect(
        await count("select count(*) as n from account_audit_events where subject_user_id = $1 and action = 'wallet_debited'", [
          user.user_id,
        ]),
      ).toBe(6);
    });

    it("announces credits and debits to the owner's webhooks with the ledger entry", async () => {
      const user = await app.createUser();
      const endpoint = await rest<Json>(app, 'POST', '/webhooks/create', {
        token: user.token,
        json: { url: receiver.url, events: ['wallet.credited', 'wallet.debited'] },
      });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
      const credited = (await credit(user.user_id, 40)).body.data;
      const debited = (await debit(user.user_id, 15)).body.data;
      // Two ledger entries are two resources: their events may arrive in either order.
      const arrived = (type: string, entryId: string) => (received: Received[]) =>
        received.some((r) => r.json.type === type && r.json.data.entry_id === entryId);
      await receiver.waitFor(arrived('wallet.credited', credited.entry.entry_id), 'the credit event');
      await receiver.waitFor(arrived('wallet.debited', debited.entry.entry_id), 'the debit event');
      expect(receiver.of('wallet.credited').find((r) => r.json.data.entry_id === credited.entry.entry_id)?.json.data).toEqual(
        credited.entry,
      );
      expect(receiver.of('wallet.debited').find((r) => r.json.data.entry_id === debited.entry.entry_id)?.json.data).toEqual(
        debited.entry,
      );
    });

    it('refuses missing and malformed fields with the fields named, on both faces, and changes nothing', async () => {
      const before = await footprint(owner.user_id);
      const missing = await adminRest('POST', '/admin/wallet/credit', { json: {} });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ message: 'missing_fields', success: false });
      expect(missing.body.errors?.map((e) => e.field).sort()).toEqual(['amount', 'description', 'user_id']);

      for (const amount of [0, -5, '0.00', '1.005', '1e3', 'abc', '-1', '12.']) {
        const answer = await credit(owner.user_id, amount);
        expect(answer.status, `${amount}: ${JSON.stringify(answer.body)}`).toBe(400);
        expect(answer.body.message).toBe('bad_request');
        expect(answer.body.errors?.map((e) => e.field)).toEqual(['amount']);
      }
      const wrongType = await adminRest('POST', '/admin/wallet/debit', {
        json: { user_id: owner.user_id, amount: true, description: 'x' },
      });
      expect(wrongType.status).toBe(400);
      expect(wrongType.body.errors?.[0]?.field).toBe('amount');
      const tooLong = await credit(owner.user_id, 1, 'x'.repeat(501));
      expect(tooLong.status).toBe(400);
      expect(tooLong.body.errors).toEqual([{ field: 'description', problem: 'at most 500 characters' }]);

      const graphql = await gql(app, admin.token, AdminDebitWalletDocument, { user_id: owner.user_id, amount: '1.001' });
      expect(graphql.errors?.[0]?.extensions?.code).toBe('missing_fields');
      expect(graphql.errors?.[0]?.extensions?.errors).toEqual([
        { field: 'description', problem: 'required' },
        { field: 'amount', problem: 'rupees greater than 0, at most 2 decimals' },
      ]);
      expect(await footprint(owner.user_id)).toEqual(before);
    });
  });

  describe("a user's fee per stamp", () => {
    it('is the configured default until an admin sets one; orders then pay duty + that fee; null goes back', async () => {
      const user = await app.createUser('customer@example.com');
      expect((await credit(user.user_id, 2000)).status).toBe(200);
      const details = await adminRest('GET', '/admin/users/details', { query: { user_id: user.user_id } });
      expect(details.status).toBe(200);
      expect(details.body.data).toEqual({
        user_id: user.user_id,
        stamp_fee: '10.00',
        default_stamp_fee: '10.00',
        custom: false,
        email: 'customer@example.com',
        created_at: expect.any(String),
        balance: '2000.00',
        currency: 'INR',
      });

      const set = await adminRest('POST', '/admin/users/stamp-fee', { json: { user_id: user.user_id, fee: '25.50' } });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect(set.body.data).toEqual({ user_id: user.user_id, stamp_fee: '25.50', default_stamp_fee: '10.00', custom: true });

      // 2 x (100 + 25.50) = 251.00
      const order = await createStampOrder(app, user.token, { quantity: 2 });
      expect(order.status, JSON.stringify(order.body)).toBe(200);
      const charge = (await rest<Json>(app, 'GET', '/wallet/ledger', { token: user.token })).body.data.items[0];
      expect(charge).toMatchObject({
        kind: 'charge',
        amount: '-251.00',
        balance_after: '1749.00',
        reference: order.body.data.client_id,
        performed_by: null,
      });
      expect(charge.description).toContain('fee 25.50 x 2');

      // GraphQL, and back to the default with null: 1 x (100 + 10.00).
      const reset = await gql(app, admin.token, AdminSetStampFeeDocument, { user_id: user.user_id, fee: null });
      expect(reset.errors).toBeUndefined();
      expect(reset.data?.adminSetStampFee).toEqual({
        user_id: user.user_id,
        stamp_fee: '10.00',
        default_stamp_fee: '10.00',
        custom: false,
      });
      expect((await createStampOrder(app, user.token, { quantity: 1 })).status).toBe(200);
      const second = (await rest<Json>(app, 'GET', '/wallet/ledger', { token: user.token })).body.data.items[0];
      expect(second).toMatchObject({ kind: 'charge', amount: '-110.00', balance_after: '1639.00' });

      // A fee of 0 is a price too (custom), and REST takes a number.
      const free = await adminRest('POST', '/admin/users/stamp-fee', { json: { user_id: user.user_id, fee: 0 } });
      expect(free.body.data).toMatchObject({ stamp_fee: '0.00', custom: true });
      const read = await gql(app, admin.token, AdminUserDocument, { user_id: user.user_id });
      expect(read.data?.adminUser).toMatchObject({ stamp_fee: '0.00', custom: true, balance: '1639.00' });
      // REST cannot tell null from left out (SOFA drops null values): both go back to the default.
      const back = await adminRest('POST', '/admin/users/stamp-fee', { json: { user_id: user.user_id, fee: null } });
      expect(back.body.data).toMatchObject({ stamp_fee: '10.00', custom: false });

      const trail = await adminRest('GET', '/admin/audit-trail', { query: { user_id: user.user_id } });
      expect(trail.status).toBe(200);
      expect(trail.body.data.items.map((event: Json) => [event.action, event.details])).toEqual([
        ['stamp_fee_set', { stamp_fee_before: '0.00', stamp_fee: null, default_stamp_fee: '10.00' }],
        ['stamp_fee_set', { stamp_fee_before: null, stamp_fee: '0.00', default_stamp_fee: '10.00' }],
        ['stamp_fee_set', { stamp_fee_before: '25.50', stamp_fee: null, default_stamp_fee: '10.00' }],
        ['stamp_fee_set', { stamp_fee_before: null, stamp_fee: '25.50', default_stamp_fee: '10.00' }],
        ['wallet_credited', expect.objectContaining({ amount: '2000.00' })],
      ]);
      for (const event of trail.body.data.items) {
        expect(event).toMatchObject({ user_id: user.user_id, actor_user_id: adminUser.user_id, actor_token_id: admin.token_id });
      }
    });

    it('refuses a fee out of range or with 3 decimals, naming it', async () => {
      const before = await footprint(owner.user_id);
      for (const fee of [-1, '10000000', '1.234', 'ten']) {
        const answer = await adminRest('POST', '/admin/users/stamp-fee', { json: { user_id: owner.user_id, fee } });
        expect(answer.status, `${fee}: ${JSON.stringify(answer.body)}`).toBe(400);
        expect(answer.body.errors?.map((e) => e.field)).toEqual(['fee']);
      }
      expect(await footprint(owner.user_id)).toEqual(before);
    });
  });

  describe('the audit trail', () => {
    it("lists the operator's CLI credits (no actor) beside admin actions, newest first, paged", async () => {
      const user = await app.createUser();
      await creditWallet(app.services.orm.em.fork(), user.user_id, 1_000n);
      await credit(user.user_id, 5);
      await debit(user.user_id, 2);
      const first = await gql(app, admin.token, AdminAuditTrailDocument, { user_id: user.user_id, size: 2 });
      expect(first.errors).toBeUndefined();
      expect(first.data?.adminAuditTrail.has_next).toBe(true);
      expect(first.data?.adminAuditTrail.items.map((event) => event.action)).toEqual(['wallet_debited', 'wallet_credited']);
      const second = await gql(app, admin.token, AdminAuditTrailDocument, { user_id: user.user_id, size: 2, page: 2 });
      expect(second.data?.adminAuditTrail).toMatchObject({
        has_next: false,
        items: [
          {
            action: 'wallet_credited',
            actor_user_id: null,
            actor_token_id: null,
            details: { amount: '10.00', description: 'manual credit', via: 'cli' },
          },
        ],
      });
      // The CLI's ledger row names nobody either.
      const ledger = await adminRest('GET', '/admin/wallet/ledger', { query: { user_id: user.user_id, page: 1, size: 10 } });
      expect(ledger.body.data.items.map((entry: Json) => [entry.kind, entry.performed_by])).toEqual([
        ['debit', adminUser.user_id],
        ['credit', adminUser.user_id],
        ['credit', null],
      ]);
    });
  });

  describe('refusals', () => {
    /** Every admin operation, on both faces, naming `userId`. */
    const operations = (userId: string) => ({
      'POST /admin/wallet/credit': {
        rest: ['POST', '/admin/wallet/credit', { json: { user_id: userId, amount: 1, description: 'x' } }] as const,
        graphql: [AdminCreditWalletDocument, { user_id: userId, amount: 1, description: 'x' }] as const,
      },
      'POST /admin/wallet/debit': {
        rest: ['POST', '/admin/wallet/debit', { json: { user_id: userId, amount: 1, description: 'x' } }] as const,
        graphql: [AdminDebitWalletDocument, { user_id: userId, amount: 1, description: 'x' }] as const,
      },
      'GET /admin/wallet/ledger': {
        rest: ['GET', '/admin/wallet/ledger', { query: { user_id: userId } }] as const,
        graphql: [AdminWalletLedgerDocument, { user_id: userId }] as const,
      },
      'POST /admin/users/stamp-fee': {
        rest: ['POST', '/admin/users/stamp-fee', { json: { user_id: userId, fee: 1 } }] as const,
        graphql: [AdminSetStampFeeDocument, { user_id: userId, fee: 1 }] as const,
      },
      'GET /admin/users/details': {
        rest: ['GET', '/admin/users/details', { query: { user_id: userId } }] as const,
        graphql: [AdminUserDocument, { user_id: userId }] as const,
      },
      'GET /admin/audit-trail': {
        rest: ['GET', '/admin/audit-trail', { query: { user_id: userId } }] as const,
        graphql: [AdminAuditTrailDocument, { user_id: userId }] as const,
      },
    });
    const names = Object.keys(operations(''));

    it.each(names)("a user's own token gets 403 forbidden and changes nothing: %s", async (name) => {
      const other = await app.createUser();
      expect((await credit(other.user_id, 50)).status).toBe(200);
      const before = [await footprint(owner.user_id), await footprint(other.user_id)];
      // Naming another user, and naming itself: neither is a user token's to do.
      for (const [token, subject] of [
        [owner.token, other.user_id],
        [owner.token, owner.user_id],
        [adminUser.token, other.user_id],
      ]) {
        const spec = operations(subject)[name as keyof ReturnType<typeof operations>];
        const [method, path, options] = spec.rest;
        const answer = await rest(app, method, path, { token, ...options });
        expect(answer.status, JSON.stringify(answer.body)).toBe(403);
        expect(answer.body).toEqual({ data: null, status_code: 403, message: 'forbidden', success: false });
        const [document, variables] = spec.graphql;
        const graphql = await gql(app, token, document as never, variables as never);
        expect(graphql.errors?.[0]).toMatchObject({ message: 'forbidden', extensions: { code: 'forbidden' } });
        expect(graphql.data ?? null).toBeNull();
      }
      expect([await footprint(owner.user_id), await footprint(other.user_id)]).toEqual(before);
    });

    it.each(names)('an unknown user is 404 not_found: %s', async (name) => {
      const spec = operations(UNKNOWN_USER)[name as keyof ReturnType<typeof operations>];
      const [method, path, options] = spec.rest;
      const answer = await adminRest(method, path, options);
      expect(answer.status, JSON.stringify(answer.body)).toBe(404);
      expect(answer.body).toMatchObject({
        data: null,
        status_code: 404,
        message: 'not_found',
        errors: [{ field: 'user_id', problem: `no user ${UNKNOWN_USER}` }],
      });
      const [document, variables] = spec.graphql;
      const graphql = await gql(app, admin.token, document as never, variables as never);
      expect(graphql.errors?.[0]?.extensions?.code).toBe('not_found');
      expect(await count('select count(*) as n from wallets where user_id = $1', [UNKNOWN_USER])).toBe(0);
    });

    it('a revoked admin token is 401 like any other', async () => {
      const issued = await issueAccessToken(app.services.orm.em.fork(), adminUser.user_id, { scope: 'admin' });
      await revokeAccessToken(app.services.orm.em.fork(), issued.token_id);
      const answer = await rest(app, 'GET', '/admin/users/details', { token: issued.token, query: { user_id: owner.user_id } });
      expect(answer.status).toBe(401);
      expect(answer.body.message).toBe('unauthorized');
    });

    it("an admin token is still its own user's token for everything else", async () => {
      const wallet = await rest<Json>(app, 'GET', '/wallet', { token: admin.token });
      expect(wallet.status).toBe(200);
      expect(wallet.body.data.user_id).toBe(adminUser.user_id);
    });
  });
});

function formatPaise(paise: bigint): string {
  return `${paise / 100n}.${String(paise % 100n).padStart(2, '0')}`;
}
