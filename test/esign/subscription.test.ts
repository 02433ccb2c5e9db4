import { print } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { recordSignature } from '../../src/modules/esign/completion/record-signature';
import { sessionTopic } from '../../src/modules/esign/session-events';
import { freePort } from '../../src/platform/db/embedded-postgres';
import { EsignSessionUpdatedDocument, type EsignSessionUpdatedSubscription } from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { corpusFile } from '../helpers/fixtures';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { startServiceProcess } from '../helpers/process';
import { untilSubscribed } from '../helpers/subscriptions';

type Update = EsignSessionUpdatedSubscription['esignSessionUpdated'];

interface Watch {
  updates: Update[];
  errors: unknown[];
  next(count: number, timeoutMs?: number): Promise<Update[]>;
  stop(): void;
}

function connect(app: TestApp, token: string): Client {
  return createClient({
    url: `${app.url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
}

/** Subscribes and resolves once the subscription is live in the service and sent its starting state, or refused. */
async function watch(app: TestApp, client: Client, clientId: string): Promise<Watch> {
  const before = app.services.events.subscriberCount(sessionTopic(clientId));
  const updates: Update[] = [];
  const errors: unknown[] = [];
  const waiters: (() => void)[] = [];
  const stop = client.subscribe<EsignSessionUpdatedSubscription>(
    { query: print(EsignSessionUpdatedDocument), variables: { client_id: clientId } },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        if (result.data) updates.push(result.data.esignSessionUpdated);
        waiters.splice(0).forEach((wake) => wake());
      },
      error: (error) => {
        errors.push(error);
        waiters.splice(0).forEach((wake) => wake());
      },
      complete: () => undefined,
    },
  );
  await untilSubscribed(app, sessionTopic(clientId), before, () => errors.length > 0);
  // Every subscription starts with the session as it reads now (test/esign/subscription-start.test.ts): the
  // tests below watch the changes after it.
  const deadline = Date.now() + 15_000;
  while (updates.length === 0 && errors.length === 0) {
    if (Date.now() > deadline) throw new Error('no starting state');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  updates.shift();
  return {
    updates,
    errors,
    stop,
    next: async (count, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      while (updates.length < count && errors.length === 0) {
        if (Date.now() > deadline) throw new Error(`got ${updates.length} of ${count} updates`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
      return updates.slice(0, count);
    },
  };
}

describe('esignSessionUpdated over graphql-ws', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let fileId: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    other = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await app.close();
  });

  const client = (token: string) => {
    const made = connect(app, token);
    clients.push(made);
    return made;
  };

  it('delivers each signer step and the completion to the owner', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { signers: [signerInput(), signerInput({ full_name: 'B' })] }),
    );
    const watching = await watch(app, client(owner.token), session.client_id);
    const em = () => app.services.orm.em.fork();
    const pdf = corpusFile('001-trivial/minimal-document.pdf');
    await recordSignature(app.services, em(), {
      sessionId: session.client_id,
      signerId: session.signers[0].signer_id,
      signedPdfs: new Map([[0, pdf]]),
    });
    const [first] = await watching.next(1);
    expect(first).toMatchObject({ client_id: session.client_id, status: 'pending', signer_idx: 1 });
    expect(first.signers.map((signer) => [signer.status, signer.eligible])).toEqual([
      ['completed', false],
      ['pending', true],
    ]);
    await recordSignature(app.services, em(), {
      sessionId: session.client_id,
      signerId: session.signers[1].signer_id,
      signedPdfs: new Map([[0, pdf]]),
    });
    const [, second] = await watching.next(2);
    expect(second).toMatchObject({ status: 'completed', signer_idx: 2 });
    expect(watching.errors).toEqual([]);
    watching.stop();
  });

  it('delivers cancellation and expiry', async () => {
    const cancelled = await createSession(app, owner.token, sessionBody(fileId));
    const expiring = await createSession(app, owner.token, sessionBody(fileId));
    const connection = client(owner.token);
    const watchCancel = await watch(app, connection, cancelled.client_id);
    const watchExpiry = await watch(app, connection, expiring.client_id);

    await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: cancelled.client_id } });
    expect((await watchCancel.next(1))[0].status).toBe('cancelled');

    await app.services.orm.em
      .fork()
      .getConnection()
      .execute(`update esign_sessions set expires_at = now() - interval '1 second' where id = ?`, [expiring.client_id]);
    await app.services.boss.send('esign.expire', { client_id: expiring.client_id });
    expect((await watchExpiry.next(1))[0].status).toBe('expired');
    // Each subscription saw only its own session.
    expect(watchCancel.updates).toHaveLength(1);
    expect(watchExpiry.updates).toHaveLength(1);
  });

  it('refuses another user’s session and never leaks its events', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const intruder = await watch(app, client(other.token), session.client_id);
    expect(intruder.errors).toHaveLength(1);
    expect(intruder.errors[0]).toMatchObject({ extensions: { code: 'not_found' } });
    await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(intruder.updates).toEqual([]);
  });

  // A second process of the service starts here: a ceiling for a loaded machine, not a measure.
  it('receives a change made by another process of the service (LISTEN/NOTIFY)', { timeout: 300_000 }, async () => {
    const port = await freePort();
    const second = startServiceProcess({
      PORT: String(port),
      DATABASE_URL: app.databaseUrl,
      DATA_DIR: `/tmp/esign-second-${port}`,
      RUN_WORKERS: 'false',
      LOG_LEVEL: 'warn',
    });
    try {
      await waitForHealth(port);
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const watching = await watch(app, client(owner.token), session.client_id);
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/esign/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: session.client_id, reason: 'from the other process' }),
      });
      expect(response.status).toBe(200);
      const [update] = await watching.next(1);
      expect(update).toMatchObject({ client_id: session.client_id, status: 'cancelled' });
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  it('refuses a connection whose connection_init carries no valid token', async () => {
    const closed = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${app.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
      socket.on('open', () =>
        socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: 'Bearer esk_unknown' } })),
      );
      socket.on('close', (code) => resolve(code));
    });
    expect(closed).toBe(4401);
  });
});

async function waitForHealth(port: number): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('the second process did not become ready');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
