/**
 * A worker process killed with kill -9 in the middle of a webhook delivery (the receiver has the request and has not
 * answered): another worker sends the event again once the lease runs out (the lease's own check queues it), with
 * the same event id.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, uploadPdf } from '../helpers/factories';
import { startServiceProcess, WORKER, type ServiceProcess } from '../helpers/process';
import { WebhookReceiver } from '../helpers/webhook-receiver';

const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_RETRY_SCHEDULE: '0.5',
};

describe('webhooks: a worker killed mid-delivery', () => {
  let app: TestApp;
  let owner: TestUser;
  let dataDir: string;
  const receiver = new WebhookReceiver();
  const workers: ServiceProcess[] = [];

  /** A queue worker process (`npm run worker`) on the app's database. */
  async function startWorker(): Promise<ServiceProcess> {
    const worker = startServiceProcess(
      { DATABASE_URL: app.databaseUrl, DATA_DIR: dataDir, QUEUE_POLL_INTERVAL_SECONDS: '0.5', LOG_LEVEL: 'info', ...WEBHOOK_ENV },
      WORKER,
    );
    workers.push(worker);
    await worker.waitForLine(/"msg":"worker running"/);
    return worker;
  }

  beforeAll(async () => {
    await receiver.start();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'esign-worker-'));
    // The API takes requests only: deliveries are the worker processes' work.
    app = await startTestApp({ env: { RUN_WORKERS: 'false', ...WEBHOOK_ENV } });
    owner = await app.createUser();
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await app?.close();
    await receiver.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is delivered again by another worker, with the same event id', async () => {
    const created = await rest<{ endpoint_id: string }>(app, 'POST', '/webhooks/create', {
      token: owner.token,
      json: { url: receiver.url, events: ['esign.session.created'] },
    });
    expect(created.status).toBe(200);
    const first = await startWorker();
    receiver.answer('hang');
    const session = await createSession(app, owner.token, sessionBody(await uploadPdf(app, owner.token)));

    const [request] = await receiver.waitFor((received) => received.length === 1, 'the first attempt');
    expect(request.json).toMatchObject({ type: 'esign.session.created', data: { client_id: session.client_id } });
    first.child.kill('SIGKILL');
    await first.exited;

    await startWorker();
    const received = await receiver.waitFor((all) => all.length === 2, 'the delivery after the kill', 90_000);
    // The lease (timeout + 5 s) ran out, and its own check queued the delivery again (not only the minute's sweep).
    const [checks] = await app.services.orm.em
      .fork()
      .getConnection()
      .execute(`select count(*)::int as n from pgboss.job where name = 'webhooks.lease-check' and state = 'completed'`);
    expect(checks.n).toBeGreaterThan(0);
    expect(received[1].json.id).toBe(request.json.id);
    expect(received[1].body).toBe(request.body);
    expect(received[1].headers['esign-delivery-attempt']).toBe('2');

    const log = await rest<{ items: any[] }>(app, 'GET', '/webhooks/deliveries', {
      token: owner.token,
      query: { event_id: request.json.id },
    });
    const [delivery] = log.body.data!.items;
    await expect
      .poll(async () => {
        const again = await rest<{ items: any[] }>(app, 'GET', '/webhooks/deliveries', {
          token: owner.token,
          query: { event_id: request.json.id },
        });
        return again.body.data!.items[0].status;
      })
      .toBe('succeeded');
    // Two attempts were made; the killed worker recorded none of its own.
    expect(delivery.attempt_count).toBe(2);
  }, 120_000);
});
