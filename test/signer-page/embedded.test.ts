import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_OTP } from '../../src/modules/sandbox/esp/sandbox-esp';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { DESKTOP, hasChromium, useBrowser, watchPage } from '../helpers/browser';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';

/**
 * The signing page embedded in an integrator's site (issue 34, docs/embedding.md), in Chromium: a host page on
 * another origin (another port) mounts it with /embed.js and hears every event; a signer signs inside the frame
 * with suresign, and with Aadhaar through the sandbox ESP in a window of its own; an origin the account does not
 * allow cannot frame the page.
 */

const SANDBOX_AADHAAR = '234123412346';

/** A host site on 127.0.0.1:<port>: one page that mounts `?url=` with the service's /embed.js and keeps every event. */
async function startHost(serviceUrl: string): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><html><head><title>Host</title><script src="${serviceUrl}/embed.js"></script></head>
<body><h1>Integrator</h1><div id="sign" style="height:800px"></div>
<script>
  window.events = [];
  window.signing = EsignEmbed.mount(document.getElementById('sign'), {
    url: new URLSearchParams(location.search).get('url'),
    onEvent: function (event, data) { window.events.push({ event: event, data: data }); },
  });
</script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.skipIf(!hasChromium)('the signing page embedded in another site', () => {
  const browser = useBrowser();
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;
  let allowed: Awaited<ReturnType<typeof startHost>>;
  let stranger: Awaited<ReturnType<typeof startHost>>;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
    allowed = await startHost(app.url);
    stranger = await startHost(app.url);
    const set = await rest<any>(app, 'PUT', '/account/embed-origins', {
      token: owner.token,
      json: { origins: [allowed.origin] },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.data).toEqual([allowed.origin]);
  });
  afterAll(async () => {
    await app?.close();
    await allowed?.close();
    await stranger?.close();
  });

  const events = (page: Page) => page.evaluate(() => (window as any).events as { event: string; data: any }[]);
  const untilEvent = (page: Page, event: string) =>
    page.waitForFunction((name) => (window as any).events.some((entry: { event: string }) => entry.event === name), event, {
      timeout: 60_000,
    });
  /** The host page on `origin`, mounting `inviteUrl`; and the signing page's frame once it is there. */
  async function host(origin: string, inviteUrl: string) {
    const context = await browser().newContext({ ...DESKTOP, reducedMotion: 'reduce' });
    const page = await context.newPage();
    const watched = watchPage(page);
    await page.goto(`${origin}/?url=${encodeURIComponent(inviteUrl)}`);
    return { context, page, errors: watched.errors };
  }
  const signingFrame = async (page: Page): Promise<Frame> => {
    const handle = await page.waitForSelector('#sign iframe');
    const frame = (await handle.contentFrame())!;
    await frame.waitForLoadState();
    return frame;
  };

  it('signs with suresign inside the frame; the host hears ready, step, signed and completed, and can hide the header', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const { context, page } = await host(allowed.origin, session.signers[0].invite_url as string);
    try {
      await untilEvent(page, 'ready');
      const frame = await signingFrame(page);
      expect((await events(page))[0]).toEqual({
        event: 'ready',
        data: expect.objectContaining({ session_id: session.client_id, signer_status: 'pending', sign_type: 'suresign' }),
      });
      await untilEvent(page, 'step');
      expect((await events(page)).find((entry) => entry.event === 'step')!.data).toEqual({ step: 'sign' });

      await page.evaluate(() => (window as any).signing.send('hide-header', true));
      await frame.waitForFunction(() => getComputedStyle(document.querySelector('.site-header')!).display === 'none');
      await page.evaluate(() => (window as any).signing.send('set-language', 'xx'));
      await untilEvent(page, 'error');
      expect((await events(page)).find((entry) => entry.event === 'error')!.data.code).toBe('unsupported_language');
      // A language the page speaks: the page switches (and keeps it for the signer), and the host hears it.
      await page.evaluate(() => (window as any).signing.send('set-language', 'hi'));
      await untilEvent(page, 'language');
      expect((await events(page)).find((entry) => entry.event === 'language')!.data).toEqual({ language: 'hi' });
      await frame.waitForFunction(() => document.documentElement.lang === 'hi');
      await frame
        .locator('[data-step="sign"] h2')
        .filter({ hasText: /\p{Script=Devanagari}/u })
        .waitFor();
      const kept = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } });
      expect(kept.body.data.signers[0].language).toBe('hi');
      await page.evaluate(() => (window as any).signing.send('set-language', 'en'));
      await frame.waitForFunction(() => document.documentElement.lang === 'en');

      await frame.getByLabel('I have read the document and I agree to sign it electronically.').check();
      await frame.getByRole('button', { name: 'Sign the document' }).click();
      await untilEvent(page, 'completed');
      const heard = (await events(page)).map((entry) => entry.event);
      expect(heard.filter((event) => ['ready', 'signed', 'completed'].includes(event))).toEqual(['ready', 'signed', 'completed']);
      expect((await events(page)).find((entry) => entry.event === 'signed')!.data).toMatchObject({
        session_id: session.client_id,
        signer_id: session.signers[0].signer_id,
        session_status: 'completed',
      });
      const read = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } });
      expect(read.body.data.status).toBe('completed');
    } finally {
      await context.close();
    }
  });

  it('a signer who declines inside the frame: the host hears declined', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const { context, page } = await host(allowed.origin, session.signers[0].invite_url as string);
    try {
      const frame = await signingFrame(page);
      await frame.getByRole('button', { name: 'Decline to sign' }).click();
      await frame.getByLabel('Why do you decline?').fill('The amount is wrong.');
      await frame.getByRole('button', { name: 'Decline and end this request' }).click();
      await untilEvent(page, 'declined');
      expect((await events(page)).find((entry) => entry.event === 'declined')!.data).toEqual({
        session_id: session.client_id,
        signer_id: session.signers[0].signer_id,
      });
    } finally {
      await context.close();
    }
  });

  it('signs with Aadhaar: the ESP opens in a window of its own, and the frame follows to signed', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { sign_type: 'aadhaar', signers: [signerInput({ full_name: 'Asha Rao' })] }),
    );
    const { context, page } = await host(allowed.origin, session.signers[0].invite_url as string);
    try {
      const frame = await signingFrame(page);
      const opening = context.waitForEvent('page');
      await frame.getByRole('button', { name: 'Open Aadhaar eSign in a new window' }).click();
      const window = await opening;
      // The signing page, top-level: consent, then the sandbox ESP's own pages.
      await window.getByLabel(/I agree to authenticate with Aadhaar/).check();
      await window.getByRole('button', { name: 'Continue to Aadhaar eSign', exact: true }).click();
      await window.getByRole('textbox', { name: 'Aadhaar number' }).fill(SANDBOX_AADHAAR);
      await window.getByLabel(/I consent to this eSign Service Provider/).check();
      await window.getByRole('button', { name: 'Continue', exact: true }).click();
      await window.getByLabel(/One-time password/).fill(SANDBOX_OTP);
      await window.getByRole('button', { name: 'Sign', exact: true }).click();
      await window.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });

      await untilEvent(page, 'signed');
      await frame.locator('[data-screen="done"]').waitFor();
      expect((await events(page)).map((entry) => entry.event)).toContain('completed');
    } finally {
      await context.close();
    }
  });

  it('an origin the account does not allow cannot frame the page; the page says who may', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const page = await fetch(session.signers[0].invite_url as string);
    expect(page.headers.get('content-security-policy')).toContain(`frame-ancestors ${allowed.origin}`);
    expect(page.headers.get('x-frame-options')).toBeNull();

    const { context, page: hostPage } = await host(stranger.origin, session.signers[0].invite_url as string);
    try {
      // Chromium fetches the page, refuses to show it in the frame and shows its own error page there instead (the
      // host's load event waits for the frame, so this is settled once the host page has loaded).
      const frame = hostPage.frames().find((candidate) => candidate !== hostPage.mainFrame())!;
      expect(frame.url()).toMatch(/^chrome-error:/);
      expect(await frame.locator('#screen').count()).toBe(0);
      expect(await events(hostPage)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the origins are https (or http on loopback), at most 20, and the account’s own; no list, no frame', async () => {
    const bad = await rest<any>(app, 'PUT', '/account/embed-origins', {
      token: owner.token,
      json: { origins: ['https://ok.example', 'http://example.com', 'https://example.com/path', '*'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors!.map((error: any) => error.field)).toEqual(['origins[1]', 'origins[2]', 'origins[3]']);
    const other = await app.createUser();
    expect((await rest<any>(app, 'GET', '/account/embed-origins', { token: other.token })).body.data).toEqual([]);
    const session = await createSession(app, other.token, sessionBody(await uploadPdf(app, other.token)));
    const page = await fetch(session.signers[0].invite_url as string);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
  });
});
