/**
 * Webhooks (issue 20), with a real HTTP receiver on 127.0.0.1: endpoints on both faces, events of sessions, orders
 * and the wallet carrying what the REST reads show, signatures a receiver can check (and openssl too), retries after
 * 500s, timeouts and a receiver that was down, order per resource, rotation, redelivery, the delivery log, disabling
 * after the retry window, and the address rules.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditWallet } from '../../src/modules/wallet/credit-wallet';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql, rest, signerApi } from '../helpers/clients';
import { createSession, createStampOrder, sessionBody, signAsAadhaar, signatureAt, uploadPdf } from '../helpers/factories';
import { WebhookDocument } from '../__generated__/graphql';
import { verifySignature, WebhookReceiver } from '../helpers/webhook-receiver';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Endpoint {
  endpoint_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret?: string;
  [key: string]: unknown;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 600)}`);
    await sleep(100);
  }
}

describe('webhooks', () => {
  let app: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    app = await startTestApp({
      env: {
        // The receiver is on loopback: local development, as the docs say.
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_TIMEOUT_MS: '1000',
        WEBHOOK_RETRY_SCHEDULE: '0.5,1',
        WEBHOOK_RETRY_WINDOW_SECONDS: '3600',
      },
    });
    owner = await app.createUser();
    stranger = await app.createUser();
  });
  afterAll(async () => {
    await app?.close();
    await receiver.stop();
  });

  async function createEndpoint(token: string, body: Record<string, unknown>) {
    return rest<Endpoint>(app, 'POST', '/webhooks/create', { token, json: body });
  }

  async function deliveries(query: Record<string, string>) {
    const response = await rest<{ items: any[]; has_next: boolean }>(app, 'GET', '/webhooks/deliveries', {
      token: owner.token,
      query,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.data!;
  }

  describe('endpoints', () => {
    it('are made with a secret shown once, listed and read without it, changed, and deleted', async () => {
      const created = await createEndpoint(owner.token, {
        url: receiver.url,
        events: ['esign.session.created', 'esign.session.created', 'wallet.charged'],
        description: 'CRM sync',
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const endpoint = created.body.data!;
      expect(endpoint).toMatchObject({
        endpoint_id: expect.stringMatching(/^whk_[0-9a-f]{32}$/),
        url: receiver.url,
        // In the order of the documented list, once each.
        events: ['esign.session.created', 'wallet.charged'],
        enabled: true,
        description: 'CRM sync',
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
        failing_since: null,
        previous_secret_expires_at: null,
      });
      const details = await rest<Endpoint>(app, 'GET', '/webhooks/details', {
        token: owner.token,
        query: { endpoint_id: endpoint.endpoint_id },
      });
      expect(details.body.data).toEqual({ ...endpoint, secret: undefined, updated_at: expect.any(String) });
      expect(JSON.stringify(details.body)).not.toContain(endpoint.secret);
      const list = await rest<{ items: Endpoint[] }>(app, 'GET', '/webhooks/list', { token: owner.token });
      expect(list.body.data!.items.map((item) => item.endpoint_id)).toContain(endpoint.endpoint_id);
      expect(JSON.stringify(list.body)).not.toContain(endpoint.secret);
      // The secret is stored sealed: not as given.
      const [row] = await app.services.orm.em
        .fork()
        .getConnection()
        .execute('select secret_sealed from webhook_endpoints where id = ?', [endpoint.endpoint_id]);
      expect(row.secret_sealed).toMatch(/^v1\./);
      expect(row.secret_sealed).not.toContain(endpoint.secret!.slice(6));

      const updated = await rest<Endpoint>(app, 'PUT', '/webhooks/update', {
        token: owner.token,
        json: { endpoint_id: endpoint.endpoint_id, events: ['*'], enabled: false },
      });
      expect(updated.body.data).toMatchObject({ events: ['*'], enabled: false, disabled_reason: 'disabled by its owner' });
      const deleted = await rest(app, 'DELETE', '/webhooks/delete', {
        token: owner.token,
        query: { endpoint_id: endpoint.endpoint_id },
      });
      expect(deleted.body.data).toEqual({ endpoint_id: endpoint.endpoint_id, deleted: true });
      const gone = await rest(app, 'GET', '/webhooks/details', {
        token: owner.token,
        query: { endpoint_id: endpoint.endpoint_id },
      });
      expect(gone.status).toBe(404);
    });

    it('refuse unknown event types, a missing url and URLs that are no http(s)', async () => {
      const unknown = await createEndpoint(owner.token, { url: receiver.url, events: ['esign.session.exploded'] });
      expect(unknown.status).toBe(400);
      expect(unknown.body.errors).toEqual([{ field: 'events', problem: expect.stringContaining('esign.session.exploded') }]);
      const missing = await createEndpoint(owner.token, { events: ['*'] });
      expect(missing.status).toBe(400);
      const ftp = await createEndpoint(owner.token, { url: 'ftp://127.0.0.1/x', events: ['*'] });
      expect(ftp.status).toBe(400);
      expect(ftp.body.message).toBe('webhook_target_refused');
      const credentials = await createEndpoint(owner.token, { url: 'http://user:pw@127.0.0.1/x', events: ['*'] });
      expect(credentials.body.message).toBe('webhook_target_refused');
    });

    it('are their owner’s alone: another user gets 404 on every operation naming one', async () => {
      const { endpoint_id } = (await createEndpoint(owner.token, { url: receiver.url, events: ['*'] })).body.data!;
      const calls: [string, string, Record<string, unknown>][] = [
        ['GET', '/webhooks/details', { query: { endpoint_id } }],
        ['PUT', '/webhooks/update', { json: { endpoint_id, enabled: false } }],
        ['DELETE', '/webhooks/delete', { query: { endpoint_id } }],
        ['POST', '/webhooks/rotate-secret', { json: { endpoint_id } }],
        ['POST', '/webhooks/test', { json: { endpoint_id } }],
        ['GET', '/webhooks/deliveries', { query: { endpoint_id } }],
        ['POST', '/webhooks/redeliver', { json: { endpoint_id, since: '2020-01-01T00:00:00Z' } }],
      ];
      for (const [method, path, options] of calls) {
        const response = await rest(app, method, path, { token: stranger.token, ...options });
        expect(response.status, `${method} ${path}`).toBe(404);
      }
      const list = await rest<{ items: Endpoint[] }>(app, 'GET', '/webhooks/list', { token: stranger.token });
      expect(list.body.data!.items).toEqual([]);
      const graphql = await gql(app, stranger.token, WebhookDocument, { endpoint_id });
      expect(graphql.errors?.[0]).toMatchObject({ extensions: { code: 'not_found' } });
      // Untouched by all that.
      const mine = await rest<Endpoint>(app, 'GET', '/webhooks/details', { token: owner.token, query: { endpoint_id } });
      expect(mine.body.data).toMatchObject({ enabled: true });
      await rest(app, 'DELETE', '/webhooks/delete', { token: owner.token, query: { endpoint_id } });
    });
  });

  describe('events and delivery', () => {
    let endpoint: Endpoint;

    beforeAll(async () => {
      endpoint = (await createEndpoint(owner.token, { url: receiver.url, events: ['*'] })).body.data!;
    });

    it('a session’s life reaches the receiver in order, signed, with data as GET esign/details shows the session', async () => {
      const fileId = await uploadPdf(app, owner.token);
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const signer = session.signers[0];
      const look = () =>
        fetch(new URL('/signer-api/document', app.url), { headers: { authorization: `Bearer ${signer.token}` } }).then(
          async (response) => ({ status: response.status, bytes: (await response.arrayBuffer()).byteLength }),
        );
      expect((await look()).status).toBe(200);
      await look(); // a second look is no second event
      const signed = await signerApi(app, 'POST', '/sign', signer.token, { consent: true });
      expect(signed.status, JSON.stringify(signed.body)).toBe(200);

      // Delivery is at least once: an attempt that outlived WEBHOOK_TIMEOUT_MS (1 s here) on a loaded machine is
      // sent again with the same event id, as docs/webhooks.md tells receivers. Each event counts once, where it
      // first arrived.
      const ofSession = () => {
        const seen = new Set<string>();
        return receiver.received.filter(
          (request) =>
            request.json.data?.client_id === session.client_id && !seen.has(request.json.id) && !!seen.add(request.json.id),
        );
      };
      await receiver.waitFor(() => ofSession().length >= 4, 'four events of the session');
      await sleep(300);
      const events = ofSession();
      expect(events.map((request) => request.json.type)).toEqual([
        'esign.session.created',
        'esign.signer.viewed',
        'esign.signer.signed',
        'esign.session.completed',
      ]);
      expect(events[1].json.signer_id).toBe(signer.signer_id);
      expect(events[2].json.signer_id).toBe(signer.signer_id);

      for (const request of events) {
        expect(request.json).toMatchObject({
          id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
          created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        });
        expect(request.headers['content-type']).toBe('application/json');
        expect(request.headers['esign-event-id']).toBe(request.json.id);
        expect(request.headers['esign-event-type']).toBe(request.json.type);
        const signature = verifySignature(request.headers['esign-signature'] as string, request.body, [endpoint.secret!]);
        expect(signature.matched).toEqual([endpoint.secret]);
        expect(Math.abs(signature.t - Date.now() / 1000)).toBeLessThan(60);
      }
      // The openssl one-liner of docs/webhooks.md agrees.
      const last = events.at(-1)!;
      const { t, v1 } = verifySignature(last.headers['esign-signature'] as string, last.body, []);
      const openssl = execFileSync('openssl', ['dgst', '-sha256', '-hmac', endpoint.secret!, '-r'], {
        input: `${t}.${last.body}`,
      })
        .toString()
        .split(' ')[0];
      expect(v1).toEqual([openssl]);

      // `data` is what the REST read answers (read when the event was first sent: the completed one, now).
      const details = await rest(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } });
      expect(last.json.data).toEqual(details.body.data);
      expect(last.json.data.status).toBe('completed');
    });

    it('an order and its charge: stamp.order.created, wallet.charged with the ledger entry, stamp.order.completed', async () => {
      await creditWallet(app.services.orm.em.fork(), owner.user_id, 100_000n);
      const order = await createStampOrder(app, owner.token, { quantity: 2 });
      expect(order.status, JSON.stringify(order.body)).toBe(200);
      const orderId = order.body.data.client_id;
      await receiver.waitFor(
        (received) => received.some((r) => r.json.type === 'stamp.order.completed' && r.json.data.client_id === orderId),
        'the order to complete',
      );
      const created = receiver.of('stamp.order.created').find((r) => r.json.data.client_id === orderId)!;
      expect(created).toBeDefined();
      const charged = receiver.of('wallet.charged').find((r) => r.json.data.reference === orderId)!;
      const ledger = await rest<any>(app, 'GET', '/wallet/ledger', { token: owner.token });
      expect(charged.json.data).toEqual(ledger.body.data.items.find((entry: any) => entry.reference === orderId));
      const completed = receiver.of('stamp.order.completed').find((r) => r.json.data.client_id === orderId)!;
      const status = await rest(app, 'GET', '/stamps/order-status', { token: owner.token, query: { client_id: orderId } });
      expect(completed.json.data).toEqual(status.body.data);
    });

    it('retries after 500s and a timeout, and records every attempt in the delivery log', async () => {
      receiver.answer(
        { status: 500, body: 'database is down' },
        'hang',
        { status: 302, body: 'moved', headers: { location: 'http://127.0.0.1:1/elsewhere' } },
        { status: 204 },
      );
      const before = receiver.received.length;
      const ping = await rest<any>(app, 'POST', '/webhooks/test', {
        token: owner.token,
        json: { endpoint_id: endpoint.endpoint_id },
      });
      expect(ping.status, JSON.stringify(ping.body)).toBe(200);
      expect(ping.body.data).toMatchObject({
        event_type: 'ping',
        status: 'pending',
        attempt_count: 1,
        last_status_code: 500,
        attempts: [{ status_code: 500, response_excerpt: 'database is down', error: 'answered 500' }],
      });
      const eventId = ping.body.data.event_id;
      const log = await until(
        () => deliveries({ event_id: eventId }),
        (page) => page.items[0]?.status === 'succeeded',
        'the ping to get through',
      );
      const [delivery] = log.items;
      expect(delivery.attempts.map((attempt: any) => attempt.status_code)).toEqual([500, null, 302, 204]);
      expect(delivery.attempts[1].error).toBe('no answer within 1000 ms');
      // A redirect is not followed: it is a failure like any other answer but a 2xx.
      expect(delivery.attempts[2]).toMatchObject({ error: 'answered 302', response_excerpt: 'moved' });
      expect(delivery.delivered_at).not.toBeNull();
      // Every attempt sent the same event, byte for byte.
      const sent = receiver.received.slice(before).filter((request) => request.json.id === eventId);
      expect(sent).toHaveLength(4);
      expect(new Set(sent.map((request) => request.body)).size).toBe(1);
      expect(sent.map((request) => request.headers['esign-delivery-attempt'])).toEqual(['1', '2', '3', '4']);
      // Backoff: the second attempt waited about the first step (0.5 s, 0.8 to 1.2 of it).
      expect(sent[2].at - sent[1].at).toBeGreaterThanOrEqual(400);
    });

    it('reaches a receiver that was down once it is up again, and keeps a resource’s events in order meanwhile', async () => {
      const port = receiver.port;
      await receiver.stop();
      const fileId = await uploadPdf(app, owner.token);
      const session = await createSession(app, owner.token, sessionBody(fileId));
      await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
      // Both events wait behind the first, which fails (connection refused) until the receiver is back.
      const waiting = await until(
        () => deliveries({ endpoint_id: endpoint.endpoint_id }),
        (page) => page.items.some((item) => item.resource_id === session.client_id && item.attempts.length >= 1),
        'a failed attempt while the receiver is down',
      );
      const failed = waiting.items.find((item) => item.resource_id === session.client_id && item.attempts.length >= 1);
      expect(failed.attempts[0].error).toMatch(/ECONNREFUSED/);
      await receiver.start(port);
      const arrived = await receiver.waitFor(
        (received) => received.filter((r) => r.json.data?.client_id === session.client_id).length >= 2,
        'both events of the session',
      );
      expect(arrived.filter((r) => r.json.data?.client_id === session.client_id).map((r) => r.json.type)).toEqual([
        'esign.session.created',
        'esign.session.cancelled',
      ]);
    });

    it('esign.signer.failed when an Aadhaar signer uses up their OTP attempts', async () => {
      const fileId = await uploadPdf(app, owner.token);
      const session = await createSession(
        app,
        owner.token,
        sessionBody(fileId, {
          sign_type: 'aadhaar',
          signers: [{ full_name: 'Asha Rao', max_retry: 1, elements: [signatureAt()] }],
        }),
      );
      const signer = session.signers[0];
      // The signer fails authentication at the ESP: its error response costs the one attempt (a Cancel costs none).
      const wrong = await signAsAadhaar(app, signer.token, { failAuthentication: true });
      expect(wrong.status).toBe(409);
      const [failed] = (
        await receiver.waitFor(
          (received) =>
            received.some((r) => r.json.type === 'esign.signer.failed' && r.json.data.client_id === session.client_id),
          'the failure event',
        )
      ).filter((r) => r.json.type === 'esign.signer.failed');
      expect(failed.json.signer_id).toBe(signer.signer_id);
      expect(failed.json.data.signers[0]).toMatchObject({ signer_id: signer.signer_id, status: 'failed' });
    });

    it('rotation: both secrets sign for 24 hours, each verifies', async () => {
      const rotated = await rest<Endpoint & { previous_secret_expires_at: string }>(app, 'POST', '/webhooks/rotate-secret', {
        token: owner.token,
        json: { endpoint_id: endpoint.endpoint_id },
      });
      expect(rotated.status).toBe(200);
      const { secret } = rotated.body.data!;
      expect(secret).not.toBe(endpoint.secret);
      const expires = Date.parse(rotated.body.data!.previous_secret_expires_at);
      expect(Math.abs(expires - Date.now() - 24 * 3_600_000)).toBeLessThan(60_000);
      const ping = await rest<any>(app, 'POST', '/webhooks/test', {
        token: owner.token,
        json: { endpoint_id: endpoint.endpoint_id },
      });
      expect(ping.body.data.status).toBe('succeeded');
      const request = receiver.received.find((r) => r.json.id === ping.body.data.event_id)!;
      const checked = verifySignature(request.headers['esign-signature'] as string, request.body, [secret!, endpoint.secret!]);
      expect(checked.v1).toHaveLength(2);
      expect(checked.matched).toEqual([secret, endpoint.secret]);
      endpoint.secret = secret;
    });

    it('redelivers one event, and every failed delivery since a time, with the same event id', async () => {
      const ping = await rest<any>(app, 'POST', '/webhooks/test', {
        token: owner.token,
        json: { endpoint_id: endpoint.endpoint_id },
      });
      const eventId = ping.body.data.event_id;
      const again = await rest<any>(app, 'POST', '/webhooks/redeliver', { token: owner.token, json: { event_id: eventId } });
      expect(again.body.data).toEqual({ queued: 1 });
      await receiver.waitFor((received) => received.filter((r) => r.json.id === eventId).length === 2, 'the redelivery');

      // A delivery given up on (failed) is sent again by `since`. The worker records the redelivery's outcome after the
      // receiver has answered: marked failed before that, the row would be overwritten as succeeded.
      const sql = app.services.orm.em.fork().getConnection();
      await expect
        .poll(async () =>
          (await sql.execute(`select status from webhook_deliveries where event_id = ?`, [eventId])).map((r: any) => r.status),
        )
        .toEqual(['succeeded']);
      await sql.execute(`update webhook_deliveries set status = 'failed' where event_id = ?`, [eventId]);
      const since = await rest<any>(app, 'POST', '/webhooks/redeliver', {
        token: owner.token,
        json: { endpoint_id: endpoint.endpoint_id, since: new Date(Date.now() - 60_000).toISOString() },
      });
      expect(since.body.data).toEqual({ queued: 1 });
      await receiver.waitFor((received) => received.filter((r) => r.json.id === eventId).length === 3, 'the second redelivery');
      const missing = await rest(app, 'POST', '/webhooks/redeliver', {
        token: owner.token,
        json: { endpoint_id: endpoint.endpoint_id },
      });
      expect(missing.status).toBe(400);
    });

    it('a change that rolls back sends nothing', async () => {
      // An order the wallet cannot pay: its transaction (order, charge, events) rolls back.
      const before = receiver.received.length;
      const refused = await createStampOrder(app, stranger.token);
      expect(refused.status).toBe(402);
      const [count] = await app.services.orm.em
        .fork()
        .getConnection()
        .execute(`select count(*)::int as n from webhook_events where user_id = ?`, [stranger.user_id]);
      expect(count.n).toBe(0);
      await sleep(500);
      expect(receiver.received.slice(before).filter((r) => r.json.type.startsWith('stamp.'))).toEqual([]);
    });
  });
});

describe('webhooks: an endpoint failing for the whole retry window is disabled and its owner told', () => {
  let app: TestApp;
  let owner: TestUser;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    app = await startTestApp({
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0.5', WEBHOOK_RETRY_WINDOW_SECONDS: '2' },
    });
    owner = await app.createUser('owner@example.com');
  });
  afterAll(async () => {
    await app?.close();
    await receiver.stop();
  });

  it('disables it, fails what it had queued, and queues an email to the owner', async () => {
    receiver.answer(...Array.from({ length: 20 }, () => ({ status: 500 })));
    const created = await rest<Endpoint>(app, 'POST', '/webhooks/create', {
      token: owner.token,
      json: { url: receiver.url, events: ['*'] },
    });
    const endpointId = created.body.data!.endpoint_id;
    await rest(app, 'POST', '/webhooks/test', { token: owner.token, json: { endpoint_id: endpointId } });
    const disabled = await until(
      () => rest<Endpoint>(app, 'GET', '/webhooks/details', { token: owner.token, query: { endpoint_id: endpointId } }),
      (response) => response.body.data?.enabled === false,
      'the endpoint to be disabled',
    );
    expect(disabled.body.data).toMatchObject({ disabled_reason: expect.stringMatching(/^every delivery failed since /) });
    const [mail] = await app.services.orm.em
      .fork()
      .getConnection()
      .execute(`select recipient, subject, text_body from notifications where kind = 'webhook_disabled'`);
    expect(mail).toMatchObject({ recipient: 'owner@example.com', subject: 'Webhook endpoint disabled' });
    expect(mail.text_body).toContain(endpointId);
    const log = await rest<any>(app, 'GET', '/webhooks/deliveries', { token: owner.token, query: { endpoint_id: endpointId } });
    expect(log.body.data.items.every((item: any) => item.status === 'failed')).toBe(true);
  });
});

describe('webhooks: targets on private addresses (WEBHOOK_ALLOW_PRIVATE unset)', () => {
  let app: TestApp;
  let owner: TestUser;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    app = await startTestApp();
    owner = await app.createUser();
  });
  afterAll(async () => {
    await app?.close();
    await receiver.stop();
  });

  it('are refused when saved: loopback, private, link-local (cloud metadata), and names that resolve to them', async () => {
    for (const url of [
      receiver.url,
      'http://10.1.2.3/hook',
      'http://192.168.1.10/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]:8080/hook',
      'http://[::ffff:127.0.0.1]:8080/hook',
      'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
      'http://localhost:8080/hook',
    ]) {
      const response = await rest(app, 'POST', '/webhooks/create', { token: owner.token, json: { url, events: ['*'] } });
      expect(response.status, url).toBe(400);
      expect(response.body).toMatchObject({ message: 'webhook_target_refused', errors: [{ field: 'url' }] });
    }
    const [count] = await app.services.orm.em.fork().getConnection().execute('select count(*)::int as n from webhook_endpoints');
    expect(count.n).toBe(0);
  });

  it('are refused again at delivery, where the connection is made (a name that now resolves to loopback)', async () => {
    // As if `localhost` had resolved to a public address when the endpoint was saved (DNS rebinding).
    const created = await rest<Endpoint>(app, 'POST', '/webhooks/create', {
      token: owner.token,
      // A public address (no DNS needed to save it); the name it becomes below resolves to loopback.
      json: { url: 'https://93.184.215.14/hook', events: ['*'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { endpoint_id } = created.body.data!;
    await app.services.orm.em
      .fork()
      .getConnection()
      .execute('update webhook_endpoints set url = ? where id = ?', [`http://localhost:${receiver.port}/hooks`, endpoint_id]);
    const ping = await rest<any>(app, 'POST', '/webhooks/test', { token: owner.token, json: { endpoint_id } });
    expect(ping.body.data.attempts).toEqual([
      expect.objectContaining({
        status_code: null,
        error: expect.stringMatching(/^localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/),
      }),
    ]);
    expect(receiver.received).toEqual([]);
  });
});

describe('webhooks: production', () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp({
      env: {
        APP_ENV: 'production',
        URL_SIGNING_SECRET: 'a-production-url-signing-secret',
        SECRETS_ENCRYPTION_KEY: 'a-production-secrets-encryption-key',
        TSA_URL: 'http://127.0.0.1:9/tsa',
        PLATFORM_SIGNING_PFX: '/nonexistent/platform.p12',
        ALLOW_SANDBOX_ESP: 'true',
        ALLOW_SIMULATED_VENDOR: 'true',
      },
    });
    owner = await app.createUser();
  });
  afterAll(async () => app?.close());

  it('takes https targets only', async () => {
    const plain = await rest(app, 'POST', '/webhooks/create', {
      token: owner.token,
      json: { url: 'http://93.184.215.14/hook', events: ['*'] },
    });
    expect(plain.status).toBe(400);
    expect(plain.body).toMatchObject({
      message: 'webhook_target_refused',
      errors: [{ field: 'url', problem: 'must be https in production' }],
    });
    const secure = await rest(app, 'POST', '/webhooks/create', {
      token: owner.token,
      json: { url: 'https://93.184.215.14/hook', events: ['*'] },
    });
    expect(secure.status, JSON.stringify(secure.body)).toBe(200);
  });
});

describe('webhooks: expiry, refunds and progress', () => {
  let app: TestApp;
  let owner: TestUser;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    app = await startTestApp({
      env: {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        // Every stamp is refused (and refunded), quickly, in batches of 50.
        STAMP_VENDOR_REJECTION_RATE: '1',
        STAMP_VENDOR_LATENCY_MS: '0',
        STAMP_PROCURE_BATCH: '50',
      },
    });
    owner = await app.createUser();
    await rest(app, 'POST', '/webhooks/create', { token: owner.token, json: { url: receiver.url, events: ['*'] } });
  });
  afterAll(async () => {
    await app?.close();
    await receiver.stop();
  });

  it('esign.session.expired when a session runs out of time', async () => {
    const session = await createSession(app, owner.token, sessionBody(await uploadPdf(app, owner.token)));
    const connection = app.services.orm.em.fork().getConnection();
    await connection.execute(`update esign_sessions set expires_at = now() - interval '1 second' where id = ?`, [
      session.client_id,
    ]);
    await app.services.boss.send('esign.expire', { client_id: session.client_id });
    const [expired] = await receiver
      .waitFor(
        (received) =>
          received.some((r) => r.json.type === 'esign.session.expired' && r.json.data.client_id === session.client_id),
        'the expiry event',
      )
      .then((received) => received.filter((r) => r.json.type === 'esign.session.expired'));
    expect(expired.json.data).toMatchObject({ client_id: session.client_id, status: 'expired' });
  });

  it('wallet.refunded for each refused stamp; progress at most once a second; completed once', async () => {
    await creditWallet(app.services.orm.em.fork(), owner.user_id, 10_000_000n);
    const order = await createStampOrder(app, owner.token, { stamp_duty_amount: 10, quantity: 200 });
    expect(order.status, JSON.stringify(order.body)).toBe(200);
    const orderId = order.body.data.client_id;
    const ofOrder = (type: string) =>
      receiver.of(type).filter((r) => (r.json.data.client_id ?? r.json.data.reference) === orderId);
    await receiver.waitFor(() => ofOrder('stamp.order.completed').length === 1, 'the order to complete', 180_000);
    // The charge is the wallet's event, not the order's: it is not ordered before the completion. Wait for it.
    await receiver.waitFor(() => ofOrder('wallet.charged').length >= 1, 'the wallet charge', 60_000);
    expect(ofOrder('stamp.order.created')).toHaveLength(1);
    expect(ofOrder('wallet.charged')).toHaveLength(1);
    expect(ofOrder('stamp.order.completed')).toHaveLength(1);
    expect(ofOrder('stamp.order.completed')[0].json.data.status_counts).toMatchObject({ rejected: 200 });
    // 200 refusals, each announced: progress events of one order are a second apart at least (by the database's
    // clock, which stamps created_at), however many changes they cover.
    const progress = [...new Map(ofOrder('stamp.order.progress').map((r) => [r.json.id, Date.parse(r.json.created_at)]))]
      .map(([, at]) => at)
      .sort((a, b) => a - b);
    for (let i = 1; i < progress.length; i++) expect(progress[i] - progress[i - 1]).toBeGreaterThanOrEqual(1000);
    // Each refund is a resource of its own, delivered on its own: wait for all of them, not for a moment.
    const refundsOf = () => receiver.of('wallet.refunded').filter((r) => String(r.json.data.description).includes(orderId));
    await receiver.waitFor(() => refundsOf().length >= 200, 'a wallet.refunded per refused stamp', 150_000);
    const refunds = refundsOf();
    expect(refunds).toHaveLength(200);
    expect(refunds.every((r) => r.json.data.kind === 'refund' && r.json.data.amount === '20.00')).toBe(true);
  }, 400_000);
});
