import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { DESKTOP, hasChromium, useBrowser } from '../helpers/browser';
import { createStampOrder, createSession, sessionBody, uploadPdf } from '../helpers/factories';
import { rest } from '../helpers/clients';

/**
 * The typed client in a browser (issue 34), on a page of another site: with a browser token its server minted, it
 * follows a stamp order live to the end (graphql-ws, across origins) and can read nothing else (HTTP, across origins:
 * the service answers CORS for bearer-token calls).
 */

/** client/src bundled for a browser (vite, as a frontend team's build would), with graphql and graphql-ws in it. */
async function bundledClient(): Promise<string> {
  const output = await build({
    configFile: false,
    logLevel: 'silent',
    build: {
      write: false,
      minify: false,
      lib: { entry: path.resolve(__dirname, '../../client/src/index.ts'), formats: ['es'], fileName: 'client' },
    },
  });
  const result = Array.isArray(output) ? output[0]! : output;
  return (result as { output: { type: string; code?: string }[] }).output.find((chunk) => chunk.type === 'chunk')!.code!;
}

const PAGE = `<!doctype html><html><head><title>Order</title></head><body><p id="status">connecting</p>
<script type="module">
  import { createEsignClient, StampOrdersDocument, EsignSessionForBrowserDocument } from '/client.js';
  const params = new URLSearchParams(location.search);
  const esign = createEsignClient({ url: params.get('service'), token: params.get('token') });
  window.statuses = [];
  try {
    const final = await esign.followOrder(params.get('order'), (order) => {
      window.statuses.push(order.status);
      document.getElementById('status').textContent = order.status;
    });
    window.final = final.status;
    window.list = await esign.request(StampOrdersDocument, { page: 1, size: 10 }).then(() => 'read', (error) => error.code);
    window.session = await esign
      .request(EsignSessionForBrowserDocument, { client_id: params.get('session') })
      .then(() => 'read', (error) => error.code);
  } catch (error) {
    window.failed = String(error && (error.code || error.message || error));
  } finally {
    await esign.close();
    window.done = true;
  }
</script></body></html>`;

describe.skipIf(!hasChromium)('the typed client in a browser', () => {
  const browser = useBrowser();
  let app: TestApp;
  let owner: TestUser;
  let host: http.Server;
  let hostOrigin: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    const code = await bundledClient();
    host = http.createServer((req, res) => {
      if (req.url === '/client.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(code);
      else res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', () => resolve()));
    hostOrigin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    host?.closeAllConnections();
    host?.close();
    await app?.close();
  });

  it('follows an order with a browser token to the end, and reads nothing else with it', async () => {
    const order = await createStampOrder(app, owner.token, { mock: true, quantity: 4 });
    expect(order.status, JSON.stringify(order.body)).toBe(200);
    const orderId = order.body.data.client_id as string;
    const minted = await rest<any>(app, 'POST', '/tokens/browser', { token: owner.token, json: { resource_id: orderId } });
    const session = await createSession(app, owner.token, sessionBody(await uploadPdf(app, owner.token)));
    const context = await browser().newContext(DESKTOP);
    try {
      const page = await context.newPage();
      const query = new URLSearchParams({
        service: app.url,
        token: minted.body.data.token,
        order: orderId,
        session: session.client_id,
      });
      await page.goto(`${hostOrigin}/?${query}`);
      await page.waitForFunction(() => (window as any).done === true, undefined, { timeout: 60_000 });
      const seen = await page.evaluate(() => ({
        statuses: (window as any).statuses,
        final: (window as any).final,
        list: (window as any).list,
        session: (window as any).session,
        failed: (window as any).failed,
      }));
      expect(seen.failed).toBeUndefined();
      expect(seen.final).toBe('completed');
      expect(seen.statuses.at(-1)).toBe('completed');
      // Another part of the API: forbidden; another resource of the same account: absent.
      expect(seen.list).toBe('forbidden');
      expect(seen.session).toBe('not_found');
    } finally {
      await context.close();
    }
  });
});
