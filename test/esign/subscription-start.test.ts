/**
 * Every per-resource subscription starts with the resource's current state (issue 29), then its changes, with a
 * real graphql-ws client: a finished session or order yields its state at once; a live one yields its current
 * state, then each change; and a change racing the start of the subscription, or made while the service's
 * listener was reconnecting, is never lost nor sent twice.
 */
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { recordSignature } from '../../src/modules/esign/completion/record-signature';
import { creditWallet } from '../../src/modules/wallet/credit-wallet';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { corpusFile } from '../helpers/fixtures';
import { createSession, createStampOrder, sessionBody, signerInput, uploadPdf } from '../helpers/factories';

const SESSION = `subscription ($id: String!) {
  esignSessionUpdated(client_id: $id) { client_id status signer_idx signers { status } }
}`;
const ORDER = `subscription ($id: String!) {
  stampOrderUpdated(client_id: $id) { client_id status_counts { pending available rejected } }
}`;

interface Watch<T> {
  updates: T[];
  errors: unknown[];
  /** Resolves once `check` holds for the updates received so far. */
  until(check: (updates: T[]) => boolean, what: string, timeoutMs?: number): Promise<T[]>;
  stop(): void;
}

function watch<T>(client: Client, query: string, id: string, field: string): Watch<T> {
  const updates: T[] = [];
  const errors: unknown[] = [];
  const stop = client.subscribe<Record<string, T>>(
    { query, variables: { id } },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        if (result.data) updates.push(result.data[field]!);
      },
      error: (error) => errors.push(error),
      complete: () => undefined,
    },
  );
  return {
    updates,
    errors,
    stop,
    async until(check, what, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check(updates)) {
        if (errors.length > 0) throw new Error(`refused while waiting for ${what}: ${JSON.stringify(errors)}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(updates)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return updates;
    },
  };
}

type SessionUpdate = { client_id: string; status: string; signer_idx: number; signers: { status: string }[] };
type OrderUpdate = { client_id: string; status_counts: { pending: number; available: number; rejected: number } };

describe('subscriptions start with the current state', () => {
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    // One stamp per batch, each taking a while: an order stays live long enough to be watched as it moves.
    app = await startTestApp({
      env: { STAMP_VENDOR_LATENCY_MS: '1500', STAMP_PROCURE_BATCH: '1', STAMP_VENDOR_REJECTION_RATE: '0' },
    });
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
    await creditWallet(app.services.orm.em.fork(), owner.user_id, 10_000_000n);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await app?.close();
  });

  const connect = () => {
    const client = createClient({
      url: `${app.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${owner.token}` },
      retryAttempts: 0,
    });
    clients.push(client);
    return client;
  };

  it('a finished session yields its state at once, and nothing after it', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
    const watching = watch<SessionUpdate>(connect(), SESSION, session.client_id, 'esignSessionUpdated');
    const [first] = await watching.until((updates) => updates.length > 0, 'the starting state');
    expect(first).toMatchObject({ client_id: session.client_id, status: 'cancelled' });
    // Another read of the same state (as a late event would cause) is not sent again.
    await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
    await rest(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } });
    expect(watching.updates).toHaveLength(1);
    watching.stop();
  });

  it('a live session yields its current state, then each change', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { signers: [signerInput(), signerInput({ full_name: 'B' })] }),
    );
    const watching = watch<SessionUpdate>(connect(), SESSION, session.client_id, 'esignSessionUpdated');
    const [current] = await watching.until((updates) => updates.length > 0, 'the starting state');
    expect(current).toMatchObject({ status: 'pending', signer_idx: 0, signers: [{ status: 'pending' }, { status: 'pending' }] });
    const pdf = corpusFile('001-trivial/minimal-document.pdf');
    for (const [index, signer] of session.signers.entries()) {
      await recordSignature(app.services, app.services.orm.em.fork(), {
        sessionId: session.client_id,
        signerId: signer.signer_id,
        signedPdfs: new Map([[0, pdf]]),
      });
      await watching.until((seen) => seen.length > index + 1, `the change after signature ${index + 1}`);
    }
    const updates = await watching.until((seen) => seen.at(-1)?.status === 'completed', 'the completion');
    expect(updates.map((update) => [update.status, update.signers.map((signer) => signer.status)])).toEqual([
      ['pending', ['pending', 'pending']],
      ['pending', ['completed', 'pending']],
      ['completed', ['completed', 'completed']],
    ]);
    expect(watching.errors).toEqual([]);
    watching.stop();
  });

  it('a change racing the start of the subscription is neither lost nor sent twice', async () => {
    const client = connect();
    for (let round = 0; round < 12; round++) {
      const session = await createSession(app, owner.token, sessionBody(fileId));
      // Subscribe and cancel at once: the cancellation commits before, during or after the starting read.
      const watching = watch<SessionUpdate>(client, SESSION, session.client_id, 'esignSessionUpdated');
      await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
      const updates = await watching.until((seen) => seen.at(-1)?.status === 'cancelled', `round ${round}: the cancellation`);
      expect(['pending,cancelled', 'cancelled']).toContain(updates.map((update) => update.status).join(','));
      watching.stop();
    }
  });

  it('a change made while the service’s listener was away reaches the subscriber once it is back', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const watching = watch<SessionUpdate>(connect(), SESSION, session.client_id, 'esignSessionUpdated');
    await watching.until((updates) => updates.length > 0, 'the starting state');
    const connection = app.services.orm.em.fork().getConnection();
    const listeners = () =>
      connection.execute<{ pid: number }[]>(
        `select pid from pg_stat_activity where application_name = 'esign-events' and datname = current_database()`,
      );
    const [before] = await listeners();
    // The bus loses its LISTEN connection; the cancellation's notification goes out while no one listens.
    await connection.execute('select pg_terminate_backend(?)', [before!.pid]);
    const deadline = Date.now() + 15_000;
    while ((await listeners()).some((row) => row.pid === before!.pid)) {
      if (Date.now() > deadline) throw new Error('the listener was not terminated');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
    // Back (the bus reconnects by itself), the subscription reads the session again.
    const updates = await watching.until((seen) => seen.at(-1)?.status === 'cancelled', 'the cancellation after the reconnect');
    expect(updates.map((update) => update.status)).toEqual(['pending', 'cancelled']);
    watching.stop();
  });

  it('a finished order yields its counts at once', async () => {
    const order = await createStampOrder(app, owner.token, { mock: true, quantity: 1 });
    expect(order.status, JSON.stringify(order.body)).toBe(200);
    const id = order.body.data.client_id as string;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const read = await rest<any>(app, 'GET', '/stamps/order-status', { token: owner.token, query: { client_id: id } });
      if (read.body.data.status_counts.pending === 0) break;
      if (Date.now() > deadline) throw new Error('the order did not finish');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const watching = watch<OrderUpdate>(connect(), ORDER, id, 'stampOrderUpdated');
    const [first] = await watching.until((updates) => updates.length > 0, 'the starting counts');
    expect(first).toEqual({ client_id: id, status_counts: { pending: 0, available: 1, rejected: 0 } });
    watching.stop();
  });

  it('a live order yields its current counts, then each change until it is done', async () => {
    const order = await createStampOrder(app, owner.token, { stamp_duty_amount: 10, quantity: 3 });
    expect(order.status, JSON.stringify(order.body)).toBe(200);
    const id = order.body.data.client_id as string;
    const watching = watch<OrderUpdate>(connect(), ORDER, id, 'stampOrderUpdated');
    const updates = await watching.until((seen) => seen.at(-1)?.status_counts.pending === 0, 'the order to be done', 60_000);
    // The first answer is the order as it stood when subscribed; every later one moved it on.
    expect(updates[0]!.status_counts.pending + updates[0]!.status_counts.available).toBe(3);
    for (let index = 1; index < updates.length; index++)
      expect(updates[index]!.status_counts.pending, JSON.stringify(updates)).toBeLessThan(
        updates[index - 1]!.status_counts.pending,
      );
    expect(updates.at(-1)!.status_counts).toEqual({ pending: 0, available: 3, rejected: 0 });
    // A stamp takes the vendor 1.5 s: the order was still moving when the subscription began.
    expect(updates.length, JSON.stringify(updates)).toBeGreaterThan(1);
    watching.stop();
  });
});
