import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../src/modules';

const { restRoutes } = composition;
import type { BlobStore } from '../../src/platform/storage/blob-store';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, restUpload } from '../helpers/clients';
import { MINIMAL_PDF } from '../helpers/fixtures';

const ENVELOPE_KEYS = ['data', 'message', 'status_code', 'success'];

function expectErrorEnvelope(response: { status: number; body: object }, status: number, message: string) {
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({ data: null, status_code: status, message, success: false });
  expect(
    Object.keys(response.body)
      .filter((key) => key !== 'errors')
      .sort(),
  ).toEqual(ENVELOPE_KEYS);
}

describe('the REST face', () => {
  let app: TestApp;
  let user: TestUser;
  let failingBlobs = false;

  beforeAll(async () => {
    app = await startTestApp({
      // A blob store that can be told to fail shows how an unexpected fault reaches the client.
      blobs: (real): BlobStore => ({
        ...real,
        check: () => real.check(),
        putFile: async (...args) => {
          if (failingBlobs) throw new Error('disk on fire: /secret/path/at/line/42');
          return real.putFile(...args);
        },
        putBytes: (...args) => real.putBytes(...args),
        getStream: (key) => real.getStream(key),
        getBytes: (key) => real.getBytes(key),
        stat: (key) => real.stat(key),
        delete: (key) => real.delete(key),
      }),
    });
    user = await app.createUser();
  });
  afterAll(async () => app.close());

  it('answers an unknown route with a 404 envelope, with or without a token', async () => {
    expectErrorEnvelope(await rest(app, 'GET', '/nothing/here'), 404, 'not_found');
    expectErrorEnvelope(await rest(app, 'GET', '/nothing/here', { token: user.token }), 404, 'not_found');
    const outside = await fetch(new URL('/not-an-api', app.url));
    expect(outside.status).toBe(404);
    expect(await outside.json()).toEqual({ data: null, status_code: 404, message: 'not_found', success: false });
  });

  it('tells caches to keep nothing: answers carry owner data and signer tokens (REST and GraphQL, refusals too)', async () => {
    const me = await rest(app, 'GET', '/wallet', { token: user.token });
    expect(me.status).toBe(200);
    expect(me.headers.get('cache-control')).toBe('no-store');
    expect((await rest(app, 'GET', '/wallet')).headers.get('cache-control')).toBe('no-store');
    const graphql = await fetch(new URL('/graphql', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ me { user_id } }' }),
    });
    expect(graphql.status).toBe(200);
    expect(graphql.headers.get('cache-control')).toBe('no-store');
    const refused = await fetch(new URL('/graphql', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ me { user_id } }' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('cache-control')).toBe('no-store');
  });

  it('answers a documented path with another method with 405 and Allow', async () => {
    const response = await rest(app, 'DELETE', '/files/upload-pdf', { token: user.token });
    expectErrorEnvelope(response, 405, 'method_not_allowed');
    expect(response.headers.get('allow')).toBe('POST');
    expectErrorEnvelope(await rest(app, 'POST', '/files/details', { token: user.token, json: {} }), 405, 'method_not_allowed');
  });

  it('does not expose the routes SOFA generates by default, and never posts to a caller-given URL', async () => {
    const received: string[] = [];
    const listener = http.createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      res.end('ok');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => resolve()));
    const target = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/hook`;
    try {
      const body = { subscription: 'subscription { anything }', variables: {}, url: target };
      expectErrorEnvelope(await rest(app, 'POST', '/webhook', { token: user.token, json: body }), 404, 'not_found');
      expectErrorEnvelope(await rest(app, 'POST', '/webhook/abc', { token: user.token, json: body }), 404, 'not_found');
      expectErrorEnvelope(await rest(app, 'DELETE', '/webhook/abc', { token: user.token }), 404, 'not_found');
      // Default SOFA paths of the exposed fields and of fields not in the contract do not exist either.
      expectErrorEnvelope(await rest(app, 'GET', '/file', { token: user.token, query: { client_id: 'x' } }), 404, 'not_found');
      expectErrorEnvelope(await rest(app, 'GET', '/me', { token: user.token }), 404, 'not_found');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(received).toEqual([]);
    } finally {
      listener.close();
    }
  });

  it('names a missing required query argument with missing_fields', async () => {
    const response = await rest(app, 'GET', '/files/details', { token: user.token });
    expectErrorEnvelope(response, 400, 'missing_fields');
    expect(response.body.errors).toEqual([{ field: 'client_id', problem: 'required' }]);
  });

  it('refuses a query argument of the wrong type with bad_request naming it', async () => {
    const response = await rest(app, 'GET', '/files/list', { token: user.token, query: { page: 'first', size: 10 } });
    expectErrorEnvelope(response, 400, 'bad_request');
    const paging = await rest(app, 'GET', '/files/list', { token: user.token, query: { page: 0, size: 1000 } });
    expectErrorEnvelope(paging, 400, 'bad_request');
    expect(paging.body.errors?.map((e) => e.field)).toEqual(['page', 'size']);
  });

  it('takes POST arguments from the JSON body only: a query parameter never overrides or fills one', async () => {
    const response = await rest(app, 'POST', '/esign/cancel', { token: user.token, query: { client_id: 'esign_x' }, json: {} });
    expect(response.status).toBe(400);
    expect(response.body.message).toBe('missing_fields');
  });

  it('refuses values of the wrong type before anything runs, naming the field and never coercing them', async () => {
    const response = await rest(app, 'POST', '/esign/initialize-esign', {
      token: user.token,
      json: { sign_type: 7, auth_mode: '1', signers: [{ full_name: 'A', elements: [{ page: '0' }], verify_email: 'yes' }] },
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toBe('bad_request');
    expect(response.body.errors?.map((e) => e.field).sort()).toEqual(
      ['auth_mode', 'sign_type', 'signers[0].elements[0].page', 'signers[0].verify_email'].sort(),
    );
  });

  it('answers an unexpected fault with a bare 500 envelope, and logs it with the request id', async () => {
    failingBlobs = true;
    try {
      const response = await restUpload(app, '/files/upload-pdf', user.token, { bytes: MINIMAL_PDF, filename: 'a.pdf' });
      expectErrorEnvelope(response, 500, 'internal_error');
      expect(JSON.stringify(response.body)).not.toContain('disk on fire');
      const requestId = response.headers.get('x-request-id');
      expect(requestId).toBeTruthy();
      const logged = app.logs.filter((line) => line.req_id === requestId);
      expect(logged.some((line) => line.level === 50 && JSON.stringify(line).includes('disk on fire'))).toBe(true);
      // Every line written while serving the request names it.
      expect(logged.length).toBeGreaterThanOrEqual(2);
    } finally {
      failingBlobs = false;
    }
    // Nothing was stored for the failed upload.
    const list = await rest<{ items: unknown[] }>(app, 'GET', '/files/list', { token: user.token, query: { page: 1, size: 10 } });
    expect(list.body.data?.items).toEqual([]);
  });

  it('logs each request once when it ends, and a client that leaves mid-upload as aborted, not as a fault', async () => {
    const served = await fetch(new URL('/healthz', app.url), { headers: { 'x-request-id': 'served-1' } });
    expect(served.status).toBe(200);
    await expect.poll(() => app.logs.filter((line) => line.req_id === 'served-1')).toHaveLength(1);
    const [completed] = app.logs.filter((line) => line.req_id === 'served-1');
    expect(completed).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { id: 'served-1', method: 'GET', url: '/healthz' },
      res: { status: 200 },
    });
    expect(typeof completed.responseTime).toBe('number');

    // Half a multipart body, then the client is gone.
    const port = Number(new URL(app.url).port);
    await new Promise<void>((resolve) => {
      const request = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/files/upload-pdf',
        headers: {
          authorization: `Bearer ${user.token}`,
          'x-request-id': 'left-early',
          'content-type': 'multipart/form-data; boundary=xyz',
          'content-length': '100000',
        },
      });
      request.on('error', () => resolve());
      request.write('--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.7\n');
      setTimeout(() => request.destroy(), 200);
    });
    await expect
      .poll(() => app.logs.filter((line) => line.req_id === 'left-early' && line.msg === 'request aborted'))
      .toHaveLength(1);
    const lines = app.logs.filter((line) => line.req_id === 'left-early');
    expect(lines.every((line) => (line.level as number) < 50)).toBe(true);
  });

  it('keeps a sane incoming x-request-id and replaces a hostile one', async () => {
    const kept = await fetch(new URL('/healthz', app.url), { headers: { 'x-request-id': 'lb-1234' } });
    expect(kept.headers.get('x-request-id')).toBe('lb-1234');
    const replaced = await fetch(new URL('/healthz', app.url), { headers: { 'x-request-id': 'bad id <script>' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves a valid OpenAPI document that describes every route with the envelope', async () => {
    const response = await fetch(new URL('/api/v1/openapi.json', app.url));
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      info: { title: string; version: string };
      paths: Record<string, Record<string, { responses: Record<string, any>; requestBody?: any }>>;
    };
    expect(document.info).toMatchObject({ title: 'Esign API', version: '2.0.0' });
    const validator = new Validator();
    const result = await validator.validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);

    // Exactly the route table: every documented route, nothing SOFA would add by itself.
    expect(Object.keys(document.paths).sort()).toEqual([...new Set(restRoutes.map((route) => `/api/v1${route.path}`))].sort());
    for (const route of restRoutes) expect(document.paths[`/api/v1${route.path}`][route.method.toLowerCase()]).toBeDefined();
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/api/v1/esign/initialize-from-template', '/api/v1/files/upload-pdf']),
    );
    expect(
      document.paths['/api/v1/esign/initialize-esign'].post.requestBody.content['application/json'].schema.properties.signers,
    ).toBeDefined();
    for (const operations of Object.values(document.paths)) {
      for (const operation of Object.values(operations)) {
        const success = operation.responses['200'].content['application/json'].schema;
        expect(Object.keys(success.properties).sort()).toEqual(ENVELOPE_KEYS);
        expect(operation.responses['401'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorEnvelope');
      }
    }
    expect(
      document.paths['/api/v1/files/upload-pdf'].post.requestBody.content['multipart/form-data'].schema.properties.file,
    ).toMatchObject({
      type: 'string',
      format: 'binary',
    });
    // A body route's fields are in its body, not repeated as query parameters the router would ignore.
    for (const route of restRoutes.filter((r) => r.method === 'POST' || r.method === 'PUT')) {
      const operation = document.paths[`/api/v1${route.path}`][route.method.toLowerCase()] as { parameters?: { in: string }[] };
      expect(
        (operation.parameters ?? []).filter((parameter) => parameter.in === 'query'),
        route.path,
      ).toEqual([]);
    }
    expect(document.paths['/api/v1/esign/cancel'].post.requestBody.content['application/json'].schema.properties).toHaveProperty(
      'client_id',
    );
    expect(document.paths['/api/v1/wallet'].get.responses['429'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorEnvelope',
    );
  });

  it('reports health and readiness', async () => {
    const health = await fetch(new URL('/healthz', app.url));
    expect(health.status).toBe(200);
    const ready = await fetch(new URL('/readyz', app.url));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', queue: 'ok', storage: 'ok' } });
  });
});
