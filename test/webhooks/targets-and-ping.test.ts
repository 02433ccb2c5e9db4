/**
 * Issue 29: what WEBHOOK_ALLOW_PRIVATE=true opens (loopback only: never private networks, link-local or cloud
 * metadata, however the address is spelled), checked when an endpoint is saved and again where each delivery
 * connects; and `webhooks/test`, which sends its ping at once whatever the endpoint's queue holds.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockedTarget, refusedAddress, targetLookup } from '../../src/platform/net/public-targets';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { WebhookReceiver } from '../helpers/webhook-receiver';

/** Link-local, metadata and private targets in the spellings a URL allows (decimal, octal, hex, IPv6 forms). */
const REFUSED = [
  'http://169.254.169.254/latest/meta-data/',
  'http://2852039166/latest/meta-data/',
  'http://0xa9fea9fe/',
  'http://0251.0376.0251.0376/',
  'http://169.254.43518/',
  'http://[::ffff:169.254.169.254]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[::169.254.169.254]/',
  'http://[::ffff:0:a9fe:a9fe]/',
  'http://[64:ff9b::169.254.169.254]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b:1::a9fe:a9fe]/',
  'http://[2002:a9fe:a9fe::1]/',
  'http://[2001:0:4136:e378:8000:63bf:5601:5601]/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::a9fe:a9fe]/',
  'http://100.100.100.200/',
  'http://10.0.0.1/',
  'http://167772161/',
  'http://172.16.0.1/',
  'http://192.168.1.10/',
  'http://192.0.0.192/',
  'http://0.0.0.0/',
  'http://[::]/',
];

describe('webhooks with WEBHOOK_ALLOW_PRIVATE=true', () => {
  let app: TestApp;
  let owner: TestUser;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    app = await startTestApp({
      env: {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_TIMEOUT_MS: '1000',
        // A failed ping waits a minute for its retry: long enough to be still pending when the next one is sent.
        WEBHOOK_RETRY_SCHEDULE: '60',
      },
    });
    owner = await app.createUser();
  });
  afterAll(async () => {
    await app?.close();
    await receiver.stop();
  });

  const create = (url: string) =>
    rest<{ endpoint_id: string }>(app, 'POST', '/webhooks/create', { token: owner.token, json: { url, events: ['*'] } });

  it('takes a receiver on loopback, however it is spelled', async () => {
    for (const url of [
      receiver.url,
      `http://localhost:${receiver.port}/hooks`,
      `http://[::1]:${receiver.port}/hooks`,
      `http://[::ffff:127.0.0.1]:${receiver.port}/hooks`,
      `http://2130706433:${receiver.port}/hooks`,
      `http://127.1:${receiver.port}/hooks`,
    ]) {
      const created = await create(url);
      expect(created.status, `${url}: ${JSON.stringify(created.body)}`).toBe(200);
      await rest(app, 'DELETE', '/webhooks/delete', {
        token: owner.token,
        query: { endpoint_id: created.body.data!.endpoint_id },
      });
    }
  });

  it('refuses private, link-local and metadata addresses in every spelling when an endpoint is saved', async () => {
    for (const url of REFUSED) {
      const response = await create(url);
      expect(response.status, url).toBe(400);
      expect(response.body, url).toMatchObject({
        message: 'webhook_target_refused',
        errors: [{ field: 'url', problem: expect.stringMatching(/which is not a public or loopback address$/) }],
      });
    }
    const update = await create(receiver.url);
    const changed = await rest(app, 'PUT', '/webhooks/update', {
      token: owner.token,
      json: { endpoint_id: update.body.data!.endpoint_id, url: 'http://[::ffff:169.254.169.254]/' },
    });
    expect(changed.status).toBe(400);
    expect(changed.body).toMatchObject({ message: 'webhook_target_refused' });
  });

  it('refuses them again where a delivery connects (a target changed after it was saved)', async () => {
    const { endpoint_id } = (await create(receiver.url)).body.data!;
    const connection = app.services.orm.em.fork().getConnection();
    const before = receiver.received.length;
    for (const url of ['http://[::ffff:169.254.169.254]/latest/meta-data/', 'http://[64:ff9b::a9fe:a9fe]/', 'http://10.0.0.1/']) {
      await connection.execute('update webhook_endpoints set url = ? where id = ?', [url, endpoint_id]);
      const ping = await rest<any>(app, 'POST', '/webhooks/test', { token: owner.token, json: { endpoint_id } });
      expect(ping.status, JSON.stringify(ping.body)).toBe(200);
      expect(ping.body.data.attempts, url).toEqual([
        expect.objectContaining({
          status_code: null,
          error: expect.stringMatching(/which is not a public or loopback address$/),
        }),
      ]);
    }
    expect(receiver.received.length).toBe(before);
  });

  it('checks the addresses a name resolves to at connect time (getaddrinfo reads numeric names the URL parser never sees)', async () => {
    const lookup = targetLookup('public-or-loopback');
    const resolve = (hostname: string) =>
      new Promise<string>((done, fail) =>
        lookup(hostname, { all: false }, (error, address) => (error ? fail(error) : done(address as string))),
      );
    await expect(resolve('localhost')).resolves.toMatch(/^(127\.0\.0\.1|::1)$/);
    for (const name of ['0251.0376.0251.0376', '2852039166', '0xa9fea9fe', '169.254.43518', '10.1']) {
      await expect(resolve(name), name).rejects.toBeInstanceOf(BlockedTarget);
    }
    // And an HTTP request made through it never connects.
    const refused = await new Promise<Error>((done) => {
      const request = http.request({ host: '0251.0376.0251.0376', port: receiver.port, lookup, agent: false }, () =>
        done(new Error('connected')),
      );
      request.on('error', done);
      request.end();
    });
    expect(refused).toBeInstanceOf(BlockedTarget);
    expect(refused.message).toBe('0251.0376.0251.0376 resolves to 169.254.169.254, which is not a public or loopback address');
  });

  it('judges each address form by what it reaches', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '93.184.215.14',
      '2606:4700::1',
    ])
      expect(refusedAddress(address, 'public-or-loopback'), address).toBe(false);
    for (const address of [
      '169.254.169.254',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::127.0.0.1',
      '2002:7f00:1::',
      'fd00:ec2::254',
      'not an address',
    ])
      expect(refusedAddress(address, 'public-or-loopback'), address).toBe(true);
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) expect(refusedAddress(address, 'public'), address).toBe(true);
    expect(refusedAddress('64:ff9b::5db8:d70e', 'public')).toBe(false);
  });

  it('sends a test ping at once, even while an earlier ping to the endpoint waits for its retry', async () => {
    const { endpoint_id } = (await create(receiver.url)).body.data!;
    receiver.answer({ status: 500 });
    const first = await rest<any>(app, 'POST', '/webhooks/test', { token: owner.token, json: { endpoint_id } });
    expect(first.body.data).toMatchObject({ status: 'pending', attempts: [expect.objectContaining({ status_code: 500 })] });
    const second = await rest<any>(app, 'POST', '/webhooks/test', { token: owner.token, json: { endpoint_id } });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.data).toMatchObject({ status: 'succeeded', attempts: [expect.objectContaining({ status_code: 200 })] });
    const pings = receiver.of('ping').filter((request) => request.json.data.endpoint_id === endpoint_id);
    expect(pings.map((request) => request.json.id)).toEqual([first.body.data.event_id, second.body.data.event_id]);
    // The first is still waiting for its retry, on its own.
    const log = await rest<any>(app, 'GET', '/webhooks/deliveries', { token: owner.token, query: { endpoint_id } });
    const firstNow = log.body.data.items.find((item: any) => item.delivery_id === first.body.data.delivery_id);
    expect(firstNow).toMatchObject({ status: 'pending', attempt_count: 1 });
  });
});
