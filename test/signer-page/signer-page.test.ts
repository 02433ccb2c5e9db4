import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { PDFDocument } from 'pdf-lib';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireDueSessions } from '../../src/modules/esign/session/expire-sessions';
import { SANDBOX_OTP } from '../../src/modules/sandbox/esp/sandbox-esp';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { DESKTOP, PHONE, hasChromium, seriousAxeViolations, useBrowser, watchPage } from '../helpers/browser';
import { rest } from '../helpers/clients';
import {
  createSession,
  sessionBody,
  signAsAadhaar,
  signatureAt,
  signerInput,
  uploadPdf,
  type SessionJson,
} from '../helpers/factories';
import { makePng } from '../helpers/fixtures';
import { longTermTailProblems, signaturesOf } from '../helpers/pdf-signatures';

const SANDBOX_AADHAAR = '234123412346';
const resolve = createRequire(__filename).resolve;

/** The page's errors without the failed loads of `status` that the test provoked on purpose. */
const unexpected = (errors: string[], status: number) =>
  errors.filter((error) => !error.includes(`status of ${status}`) && !error.startsWith(`http ${status} `));

describe.skipIf(!hasChromium)('the signer page in a browser', () => {
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;
  const browser = useBrowser();

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app.close());

  const details = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data;

  async function signerCall(method: 'GET' | 'POST', path: string, token: string, json?: unknown) {
    const response = await fetch(new URL(`/signer-api${path}`, app.url), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) },
      body: json ? JSON.stringify(json) : undefined,
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  /** A fresh browser context (no shared state) with one page; `errors` collects page errors and CSP refusals. */
  async function open(url: string, options: BrowserContextOptions = DESKTOP) {
    const context = await browser().newContext({ ...options, acceptDownloads: true, reducedMotion: 'reduce' });
    const page = await context.newPage();
    const watched = watchPage(page);
    await page.goto(url);
    return { page, errors: watched.errors, close: () => context.close() };
  }

  /** Presses Tab until the focused element is `name` (an accessible name), as a keyboard user would. */
  async function tabTo(page: Page, matches: (focused: { tag: string; name: string; type: string }) => boolean, limit = 15) {
    for (let i = 0; i < limit; i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        const label = el && 'labels' in el ? (el as HTMLInputElement).labels?.[0]?.textContent : null;
        return {
          tag: el?.tagName.toLowerCase() ?? '',
          name: (el?.getAttribute('aria-label') ?? label ?? el?.textContent ?? '').trim(),
          type: el?.getAttribute('type') ?? '',
        };
      });
      if (matches(focused)) return focused;
    }
    throw new Error('Tab never reached the control');
  }

  const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '');

  /** Scrolls every page into view (pages are drawn as they come near) and waits until all are drawn. */
  async function renderAllPages(page: Page): Promise<number> {
    await page.locator('.document[data-pages]').waitFor({ timeout: 20_000 });
    const pageCount = Number(await page.locator('.document').getAttribute('data-pages'));
    await page.waitForFunction((count) => document.querySelectorAll('.pages > li').length === count, pageCount);
    for (const item of await page.locator('.pages > li').all()) await item.scrollIntoViewIfNeeded();
    await page.waitForFunction(
      (count) => document.querySelectorAll('canvas.page-canvas[data-rendered="true"]').length === count,
      pageCount,
      { timeout: 30_000 },
    );
    return pageCount;
  }

  it('serves the page shell with strict headers, and its assets (pdf.js from this origin)', async () => {
    const response = await fetch(new URL('/sign/some-signer-token', app.url));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('permissions-policy')).toContain('camera=(self)');
    expect(response.headers.get('permissions-policy')).toContain('geolocation=(self)');
    const csp = Object.fromEntries(
      response.headers
        .get('content-security-policy')!
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values.join(' ')]),
    );
    expect(csp).toMatchObject({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'connect-src': "'self'",
      'worker-src': "'self' blob:",
      'img-src': "'self' data: blob:",
      'frame-ancestors': "'none'",
      'base-uri': "'none'",
    });
    expect(Object.values(csp).join(' ')).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);

    const html = await response.text();
    expect(html).toMatch(/<html lang="en">/);
    expect(html).not.toContain('some-signer-token');
    // No inline script or style: every script has a src, no style attributes or elements.
    expect(html.match(/<script\b[^>]*>/g)!.every((tag) => / src="\/signer-assets\//.test(tag))).toBe(true);
    expect(html).not.toMatch(/<style|style="/);

    const pdfjsBase = /<meta name="pdfjs-base" content="([^"]+)"/.exec(html)![1];
    expect(pdfjsBase).toBe(
      `/signer-assets/pdfjs-${JSON.parse(await readFile(resolve('pdfjs-dist/package.json'), 'utf8')).version}/`,
    );
    for (const file of ['pdf.min.mjs', 'pdf.worker.min.mjs']) {
      const asset = await fetch(new URL(`${pdfjsBase}${file}`, app.url));
      expect(asset.status, file).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(asset.headers.get('cache-control')).toContain('immutable');
      const body = Buffer.from(await asset.arrayBuffer());
      expect(body.equals(await readFile(resolve(`pdfjs-dist/build/${file}`)))).toBe(true);
    }
    // Only the two builds and pdf.js's font data are served from the package, nothing else of it.
    expect((await fetch(new URL(`${pdfjsBase}pdf.mjs`, app.url))).status).toBe(404);
    expect((await fetch(new URL(`${pdfjsBase}standard_fonts/LiberationSans-Regular.ttf`, app.url))).status).toBe(200);
    expect((await fetch(new URL(`${pdfjsBase}..%2F..%2Fpackage.json`, app.url))).status).toBe(404);

    for (const [file, type] of [
      ['signer.js', /^text\/javascript/],
      ['signer.css', /^text\/css/],
      ['document-view.js', /^text\/javascript/],
    ] as const) {
      const asset = await fetch(new URL(`/signer-assets/${file}`, app.url));
      expect(asset.status, file).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(type);
      expect(asset.headers.get('cache-control')).toBe('no-cache');
      const etag = asset.headers.get('etag')!;
      expect(etag).toBeTruthy();
      expect(
        (
          await fetch(new URL(`/signer-assets/${file}`, app.url), {
            headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' },
          })
        ).status,
      ).toBe(304);
    }
    expect((await fetch(new URL('/signer-assets/nothing.js', app.url))).status).toBe(404);
    // The shell template is not an asset.
    expect((await fetch(new URL('/signer-assets/sign.html', app.url))).status).toBe(404);
  });

  it('signs a suresign session by keyboard alone on a desktop, with every page drawn and the field outlined', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        sender: 'Priya Menon',
        allow_download: true,
        email_template_overrides: {
          company_name: 'Acme Lending',
          legal_name: 'Acme Lending Pvt Ltd',
          support_email: 'help@acme.test',
        },
        signers: [
          signerInput({
            full_name: 'Asha Rao',
            reason: 'Loan agreement',
            elements: [signatureAt(0, 72, 640), signatureAt(3, 300, 500)],
          }),
        ],
      }),
    );
    const signer = session.signers[0];
    expect(signer.invite_url).toBe(`${app.url}/sign/${signer.token}`);
    const view = await signerCall('GET', '/session', signer.token);
    expect(view.body.data.signer.fields).toEqual([
      { document: 0, page: 0, x: 72, y: 640, width: 160, height: 50 },
      { document: 0, page: 3, x: 300, y: 500, width: 160, height: 50 },
    ]);

    const { page, errors, close } = await open(signer.invite_url as string);
    try {
      await expect.poll(() => focusedId(page), { timeout: 30_000 }).toBe('doc-title');
      expect(await page.locator('h1').textContent()).toBe('contract.pdf');
      expect(await page.locator('#brand').textContent()).toBe('Acme Lending');
      expect(await page.locator('#brand-legal').textContent()).toBe('Acme Lending Pvt Ltd');
      expect(await page.locator('footer a[href="mailto:help@acme.test"]').count()).toBe(1);
      const facts = await page.locator('.facts').innerText();
      expect(facts).toContain('Priya Menon');
      expect(facts).toContain('Asha Rao');
      expect(facts).toContain('Loan agreement');
      expect(await page.title()).toBe('Sign contract.pdf – Acme Lending');

      const pdfPages = (await PDFDocument.load(await (await fetchDocument(signer.token)).arrayBuffer())).getPageCount();
      expect(await renderAllPages(page)).toBe(pdfPages);
      expect(await page.locator('canvas.page-canvas').count()).toBe(pdfPages);
      // The pages are really drawn (not blank) and the outlines sit on the signer's pages, where the fields are.
      const inked = await page.evaluate(() => {
        const canvas = document.querySelector('canvas.page-canvas') as HTMLCanvasElement;
        const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
        let dark = 0;
        for (let i = 0; i < data.length; i += 4) if (data[i] < 128) dark++;
        return dark;
      });
      expect(inked).toBeGreaterThan(100);
      // The words are there as text too (selectable, readable by screen readers).
      await expect
        .poll(() => page.locator('.pages > li').first().locator('.textLayer').textContent())
        .toContain('Hello, here is some text');
      const boxes = await page.evaluate(() =>
        [...document.querySelectorAll('.pages > li')].map((item) =>
          [...item.querySelectorAll('.field-box')].map((box) => {
            const frame = item.querySelector('.page-frame')!.getBoundingClientRect();
            const rect = box.getBoundingClientRect();
            return { left: (rect.left - frame.left) / frame.width, top: (rect.top - frame.top) / frame.height };
          }),
        ),
      );
      expect(boxes.map((onPage) => onPage.length)).toEqual([1, 0, 0, 1]);
      const [pageWidth, pageHeight] = await pageSize(signer.token, 0);
      expect(boxes[0][0].left).toBeCloseTo(72 / pageWidth, 2);
      expect(boxes[0][0].top).toBeCloseTo(640 / pageHeight, 2);
      expect(await page.locator('canvas.page-canvas').first().getAttribute('aria-label')).toBe(
        'Page 1 of 4, with the box where your signature will be placed',
      );

      expect(await seriousAxeViolations(page)).toEqual([]);

      // Keyboard only. From the title, Tab reaches the Sign button; without consent it is refused next to the box.
      expect(await focusedId(page)).toBe('doc-title');
      await tabTo(page, (focused) => focused.name === 'Sign the document');
      await page.keyboard.press('Enter');
      const consent = page.getByLabel('I have read the document and I agree to sign it electronically.');
      await expect.poll(() => consent.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('.field-error:not([hidden])').textContent()).toBe(
        'Tick the box to confirm that you agree to sign.',
      );
      await expect.poll(() => page.locator('#announcer').textContent()).toBe('Tick the box to confirm that you agree to sign.');
      expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).type)).toBe('checkbox');
      await page.keyboard.press('Space');
      expect(await consent.isChecked()).toBe(true);
      await tabTo(page, (focused) => focused.name === 'Sign the document');
      await page.keyboard.press('Enter');

      await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
      expect(await page.locator('h1').textContent()).toBe('You have signed “contract.pdf”');
      expect(await focusedId(page)).toBe('message-title');
      expect(await page.locator('main').innerText()).toContain('Everyone has signed');
      expect(await seriousAxeViolations(page)).toEqual([]);

      await tabTo(page, (focused) => focused.name === 'Download the signed document');
      const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
      expect(download.suggestedFilename()).toBe('contract.pdf');
      const downloaded = await readFile((await download.path())!);
      expect(downloaded.subarray(0, 5).toString()).toBe('%PDF-');
      const signatures = await signaturesOf(downloaded);
      expect(signatures).toHaveLength(1);
      expect(signatures[0].verification.signatureValid && signatures[0].verification.digestValid).toBe(true);
      // The completed document: the signature, then only the long-term updates (a /DSS, a document time-stamp).
      expect(await longTermTailProblems(downloaded)).toEqual([]);
      expect((await details(session.client_id)).status).toBe('completed');
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });

  async function fetchDocument(token: string) {
    return fetch(new URL('/signer-api/document', app.url), { headers: { authorization: `Bearer ${token}` } });
  }

  async function pageSize(token: string, index: number): Promise<[number, number]> {
    const pdf = await PDFDocument.load(await (await fetchDocument(token)).arrayBuffer());
    const { width, height } = pdf.getPage(index).getCropBox();
    return [width, height];
  }

  it('sends the signer to redirect_url after signing', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { redirect_url: `${app.url}/healthz?from=signing` }),
    );
    const { page, errors, close } = await open(session.signers[0].invite_url as string);
    try {
      await page.getByLabel('I have read the document and I agree to sign it electronically.').check();
      await page.getByRole('button', { name: 'Sign the document' }).click();
      await page.waitForURL(`${app.url}/healthz?from=signing`, { timeout: 30_000 });
      expect(await page.textContent('body')).toContain('"ok"');
      expect((await details(session.client_id)).status).toBe('completed');
      // The browser asks the JSON page it lands on for a favicon: not the signer page's concern.
      expect(errors.filter((error) => !error.includes('/favicon.ico'))).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows a later signer whose turn it is, without sign controls, until it is theirs', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        signers: [
          signerInput({ full_name: 'Asha Rao' }),
          signerInput({ full_name: 'Vikram Singh', elements: [signatureAt(1, 100, 300)] }),
        ],
      }),
    );
    const [first, second] = session.signers;
    const { page, errors, close } = await open(second.invite_url as string);
    try {
      await page.locator('[data-step="waiting"]').waitFor();
      expect(await page.locator('.whose-turn').textContent()).toBe('It is Asha Rao’s turn to sign.');
      expect(await page.locator('input[type="checkbox"]').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Sign the document' }).count()).toBe(0);
      // The document is there to read meanwhile, with this signer's field on page 2.
      expect(await renderAllPages(page)).toBe(4);
      expect(await page.locator('.pages > li').nth(1).locator('.field-box').count()).toBe(1);
      expect(await seriousAxeViolations(page)).toEqual([]);

      expect((await signerCall('POST', '/sign', first.token, { consent: true })).status).toBe(200);
      await page.getByRole('button', { name: 'Check again' }).click();
      await page.getByRole('button', { name: 'Sign the document' }).waitFor();
      await expect.poll(() => focusedId(page), { timeout: 30_000 }).toBe('step-heading');
      await page.getByLabel('I have read the document and I agree to sign it electronically.').check();
      await page.getByRole('button', { name: 'Sign the document' }).click();
      await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
      expect((await details(session.client_id)).status).toBe('completed');
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });

  it('signs with Aadhaar on a phone: consent, then the ESP’s pages (number, a wrong OTP, the right one), and back', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { sign_type: 'aadhaar', allow_download: false, signers: [signerInput({ full_name: 'Asha Rao' })] }),
    );
    const { page, errors, close } = await open(session.signers[0].invite_url as string, PHONE);
    try {
      const consent = page.getByLabel(/I agree to authenticate with Aadhaar/);
      await consent.waitFor();
      expect(await renderAllPages(page)).toBe(4);
      // Nothing is wider than the phone.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(await page.locator('.facts').innerText()).toContain('Aadhaar eSign');

      // Without consent the page stays, and says why next to the box.
      const go = page.getByRole('button', { name: 'Continue to Aadhaar eSign' });
      await go.click();
      await expect.poll(() => consent.getAttribute('aria-invalid')).toBe('true');
      expect(await consent.getAttribute('aria-describedby')).toMatch(/-error/);
      await expect.poll(() => page.locator('#announcer').textContent()).toBe('Tick the box to confirm that you agree to sign.');

      // On to the ESP's own pages, in this tab.
      await consent.check();
      await go.click();
      await page.waitForURL(/\/sandbox\/esp$/);
      await page.getByRole('textbox', { name: 'Aadhaar number' }).fill(SANDBOX_AADHAAR);
      await page.getByLabel(/I consent to this eSign Service Provider/).check();
      await page.getByRole('button', { name: 'Continue', exact: true }).click();
      const otp = page.getByLabel(/One-time password/);
      await otp.waitFor();
      expect(await page.locator('main').innerText()).toContain('XXXXXX3210');
      await otp.fill('000000');
      await page.getByRole('button', { name: 'Sign', exact: true }).click();
      await expect.poll(() => page.locator('#otp-error').textContent()).toBe('The OTP is not correct. 2 attempts left.');
      await page.getByLabel(/One-time password/).fill(SANDBOX_OTP);
      await page.getByRole('button', { name: 'Sign', exact: true }).click();

      await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
      expect(page.url()).toBe(session.signers[0].invite_url);
      expect(await page.getByRole('button', { name: /Download/ }).count()).toBe(0);
      const read = await details(session.client_id);
      expect(read.status).toBe('completed');
      expect(read.signers[0].aadhaar_cert_details.name).toBe('Asha Rao');
      // The wrong OTP is the ESP's page answering 400, as the browser logs a failed load.
      expect(unexpected(errors, 400)).toEqual([]);
    } finally {
      await close();
    }
  });

  /**
   * The checks (email and mobile OTP, location, face) as the contract describes them. Their endpoints do not
   * exist yet, so the browser answers them itself (routes), keeping the state a real server would; the
   * session, the document and the signature itself go to the real service.
   */
  it('walks through the requested checks in order, against the contract (check endpoints faked in the browser)', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { signers: [signerInput({ full_name: 'Asha Rao' })] }),
    );
    const home = { latitude: 12.9716, longitude: 77.5946 };
    const checks: any[] = [
      { kind: 'email', status: 'pending', sent_to: 'a***@example.com' },
      { kind: 'mobile', status: 'pending', sent_to: 'XXXXXX3210' },
      { kind: 'location', status: 'pending', source: 'device', geofence: { ...home, radius: 500 } },
      { kind: 'face', status: 'pending', attempts_left: 3 },
    ];
    const calls: { path: string; body: any; type?: string }[] = [];
    const pass = (kind: string) => (checks.find((check) => check.kind === kind).status = 'passed');
    const fail = (status: number, message: string, errors?: { field: string; problem: string }[]) => ({
      status,
      json: { data: null, status_code: status, message, success: false, ...(errors ? { errors } : {}) },
    });
    const ok = (data: unknown) => ({ status: 200, json: { data, status_code: 200, message: 'Success', success: true } });

    const context = await browser().newContext({ ...PHONE, reducedMotion: 'reduce' });
    const page = await context.newPage();
    const { errors } = watchPage(page);
    await page.route('**/signer-api/**', async (route) => {
      const request = route.request();
      const path = new URL(request.url()).pathname.replace('/signer-api', '');
      if (path === '/session') {
        const real = await route.fetch();
        const envelope = await real.json();
        envelope.data.checks = checks;
        envelope.data.next_check = checks.find((check) => check.status !== 'passed')?.kind ?? null;
        return route.fulfill({ response: real, json: envelope });
      }
      if (request.method() !== 'POST' || path === '/sign') return route.continue();
      const isJson = request.headers()['content-type'] === 'application/json';
      const body = isJson ? request.postDataJSON() : request.postDataBuffer();
      calls.push({ path, body, type: request.headers()['content-type'] });
      const tries = calls.filter((call) => call.path === path).length;
      let answer;
      if (path === '/otp/send') {
        answer =
          body.channel === 'email' && tries === 2
            ? fail(429, 'Wait 30 seconds before asking for a new code.')
            : ok({
                channel: body.channel,
                sent_to: checks.find((c) => c.kind === body.channel).sent_to,
                expires_at: new Date(Date.now() + 600_000),
                resend_after: new Date(Date.now() + 30_000),
              });
      } else if (path === '/otp/verify') {
        if (body.code !== '123456') answer = fail(400, 'otp_invalid', [{ field: 'code', problem: '2 attempt(s) left' }]);
        else answer = (pass(body.channel), ok({ channel: body.channel, status: 'passed' }));
      } else if (path === '/location') {
        answer =
          tries === 1
            ? fail(403, 'You are 2.1 km from the agreed place; signing is allowed within 500 m.')
            : (pass('location'), ok({ status: 'passed', ...home, ip: '127.0.0.1', distance_m: 3 }));
      } else if (path === '/face') {
        checks[3].attempts_left--;
        answer =
          tries === 1
            ? fail(400, 'face_mismatch', [{ field: 'image', problem: '2 attempt(s) left' }])
            : (pass('face'),
              ok({ status: 'passed', match_score: 91, liveness_score: 88, attempts_left: checks[3].attempts_left }));
      } else answer = fail(404, 'not_found');
      return route.fulfill(answer);
    });

    try {
      await page.goto(session.signers[0].invite_url as string);
      const stepHeading = page.locator('#step-heading');
      const progress = () => page.locator('.progress li').allTextContents();

      // 1. Email: the progress shows every step; a wrong code is refused next to the field; resending too early says when.
      await expect.poll(() => stepHeading.textContent()).toBe('Verify your email address');
      expect(await progress()).toEqual([
        'Verify email (current step)',
        'Verify mobile number',
        'Confirm location',
        'Photo check',
        'Sign',
      ]);
      expect(await seriousAxeViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Send code' }).click();
      const code = page.getByLabel('Verification code');
      await expect.poll(() => focusedId(page)).toBe(await code.getAttribute('id'));
      expect(await page.locator('.step').innerText()).toContain('We sent a code to a***@example.com.');
      await page.getByRole('button', { name: 'Send a new code' }).click();
      await expect
        .poll(() => page.locator('.step .action-error').textContent())
        .toBe('Wait 30 seconds before asking for a new code.');
      await code.fill('000000');
      await page.getByRole('button', { name: 'Verify code' }).click();
      await expect.poll(() => code.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('.field-error:not([hidden])').textContent()).toBe('That code is not correct. 2 attempts left.');
      await code.fill('123456');
      await page.getByRole('button', { name: 'Verify code' }).click();

      // 2. Mobile, by keyboard: focus is on the new step's heading.
      await expect.poll(() => stepHeading.textContent()).toBe('Verify your mobile number');
      await expect.poll(() => focusedId(page), { timeout: 30_000 }).toBe('step-heading');
      expect((await progress())[0]).toBe('Verify email (done)');
      await tabTo(page, (focused) => focused.name === 'Send code');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('autocomplete'))).toBe('one-time-code');
      await page.keyboard.type('123456');
      await page.keyboard.press('Enter');

      // 3. Location: refused by the browser first (help to allow it, retry), then outside the fence, then inside.
      await expect.poll(() => stepHeading.textContent()).toBe('Confirm your location');
      expect(await page.locator('.step').innerText()).toContain('within 500 m');
      await page.getByRole('button', { name: 'Share my location' }).click();
      await expect.poll(() => page.locator('.help').textContent()).toContain('Your browser blocked access to your location');
      await context.grantPermissions(['geolocation']);
      await context.setGeolocation({ ...home, accuracy: 12 });
      await page.getByRole('button', { name: 'Try again' }).click();
      await expect
        .poll(() => page.locator('.step .action-error').textContent())
        .toBe('You are 2.1 km from the agreed place; signing is allowed within 500 m.');
      await expect.poll(() => page.locator('#announcer').textContent()).toContain('2.1 km');
      await page.getByRole('button', { name: 'Try again' }).click();

      // 4. Face: a camera photo that does not match, then a chosen file (the fallback).
      await expect.poll(() => stepHeading.textContent()).toBe('Take a photo of your face');
      expect(await seriousAxeViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Start camera' }).click();
      await page.getByRole('button', { name: 'Take photo' }).click();
      await page.getByRole('button', { name: 'Use this photo' }).click();
      await expect
        .poll(() => page.locator('.step .action-error').textContent())
        .toBe('The photo does not match the reference photo. 2 attempts left.');
      await page
        .getByLabel('Or choose a photo of your face')
        .setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: makePng(64, 64) });
      await page.getByRole('button', { name: 'Use this photo' }).click();

      // 5. Sign (the real service).
      await expect.poll(() => stepHeading.textContent()).toBe('Sign the document');
      expect(await progress()).toEqual([
        'Verify email (done)',
        'Verify mobile number (done)',
        'Confirm location (done)',
        'Photo check (done)',
        'Sign (current step)',
      ]);
      await page.getByLabel('I have read the document and I agree to sign it electronically.').check();
      await page.getByRole('button', { name: 'Sign the document' }).click();
      await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });

      expect(calls.map((call) => [call.path, call.type])).toEqual([
        ['/otp/send', 'application/json'],
        ['/otp/send', 'application/json'],
        ['/otp/verify', 'application/json'],
        ['/otp/verify', 'application/json'],
        ['/otp/send', 'application/json'],
        ['/otp/verify', 'application/json'],
        ['/location', 'application/json'],
        ['/location', 'application/json'],
        ['/face', 'image/jpeg'],
        ['/face', 'image/jpeg'],
      ]);
      expect(calls[0].body).toEqual({ channel: 'email' });
      expect(calls[5].body).toEqual({ channel: 'mobile', code: '123456' });
      expect(calls[7].body).toEqual({ ...home, accuracy: 12 });
      for (const photo of [calls[8].body, calls[9].body] as Buffer[])
        expect(photo.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
      expect(unexpected(unexpected(unexpected(errors, 400), 403), 429)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows what happened when the session changed behind the page (cancelled while the signer was reading)', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId, { sender: 'Priya Menon' }));
    const { page, errors, close } = await open(session.signers[0].invite_url as string);
    try {
      await page.getByLabel('I have read the document and I agree to sign it electronically.').check();
      expect(
        (await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } })).status,
      ).toBe(200);
      await page.getByRole('button', { name: 'Sign the document' }).click();
      await page.locator('[data-screen="cancelled"]').waitFor();
      await expect.poll(() => focusedId(page), { timeout: 30_000 }).toBe('message-title');
      await expect.poll(() => page.locator('#announcer').textContent()).toBe('The session is cancelled.');
      expect(unexpected(errors, 409)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('declines with a reason (required), which ends the request; the other signer’s link then says so', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        sender: 'Priya Menon',
        signers: [signerInput({ full_name: 'Asha Rao' }), signerInput({ full_name: 'Vikram Singh' })],
      }),
    );
    const [first, second] = session.signers;
    // The second signer declines while it is not yet their turn.
    const { page, errors, close } = await open(second.invite_url as string, PHONE);
    try {
      await page.locator('[data-step="waiting"]').waitFor();
      const toggle = page.getByRole('button', { name: 'Decline to sign' });
      expect(await toggle.getAttribute('aria-expanded')).toBe('false');
      await toggle.click();
      expect(await toggle.getAttribute('aria-expanded')).toBe('true');
      const reason = page.getByLabel('Why do you decline?');
      await expect.poll(() => reason.evaluate((el) => el === document.activeElement)).toBe(true);
      expect(await seriousAxeViolations(page)).toEqual([]);
      // Without a reason: the field says so, and nothing is sent.
      await page.getByRole('button', { name: 'Decline and end this request' }).click();
      await expect.poll(() => page.locator('.decline .field-error').textContent()).toBe('Say why you decline to sign.');
      expect(await reason.getAttribute('aria-invalid')).toBe('true');
      expect((await details(session.client_id)).status).toBe('pending');

      await reason.fill('The rent in clause 4 is wrong.');
      await page.getByRole('button', { name: 'Decline and end this request' }).click();
      await page.locator('[data-screen="declined"]').waitFor();
      expect(await page.locator('h1').textContent()).toBe('You declined to sign “contract.pdf”');
      expect(await page.locator('main').innerText()).toContain(
        'Priya Menon has been told, with your reason: “The rent in clause 4 is wrong.”',
      );
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
    const read = await details(session.client_id);
    expect(read.status).toBe('declined');
    expect(read.signers[1]).toMatchObject({ status: 'declined', decline_reason: 'The rent in clause 4 is wrong.' });

    const other = await open(first.invite_url as string);
    try {
      await other.page.locator('[data-screen="declined"]').waitFor();
      expect(await other.page.locator('h1').textContent()).toBe('This signing request has ended');
      expect(await other.page.locator('main').innerText()).toContain(
        'Vikram Singh declined to sign “contract.pdf”, so nobody can sign it any more.',
      );
      expect(await other.page.locator('main').getByRole('button').count()).toBe(0);
      expect(await seriousAxeViolations(other.page)).toEqual([]);
      expect(other.errors).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('a reassigned signer’s old link is dead at once; the new link opens the page for the new person', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { signers: [signerInput({ full_name: 'Asha Rao' })] }),
    );
    const old = session.signers[0];
    const reassigned = await rest<any>(app, 'POST', '/esign/reassign-signer', {
      token: owner.token,
      json: { client_id: session.client_id, signer_id: old.signer_id, full_name: 'Meera Iyer', email: 'meera@example.com' },
    });
    expect(reassigned.status).toBe(200);
    const dead = await open(old.invite_url as string);
    try {
      await dead.page.locator('[data-screen="invalid"]').waitFor();
      expect(await dead.page.locator('h1').textContent()).toBe('This signing link is not valid');
      expect(unexpected(dead.errors, 401)).toEqual([]);
    } finally {
      await dead.close();
    }
    const fresh = await open(reassigned.body.data.signers[0].invite_url as string);
    try {
      await fresh.page.getByRole('button', { name: 'Sign the document' }).waitFor();
      expect(await fresh.page.locator('main').innerText()).toContain('Meera Iyer');
      await fresh.page.getByLabel('I have read the document and I agree to sign it electronically.').check();
      await fresh.page.getByRole('button', { name: 'Sign the document' }).click();
      await fresh.page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
      expect(fresh.errors).toEqual([]);
    } finally {
      await fresh.close();
    }
    expect((await details(session.client_id)).signers[0]).toMatchObject({ full_name: 'Meera Iyer', status: 'completed' });
  });

  it('a parallel session: the second signer signs first, with no waiting screen', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        signing_order: 'parallel',
        signers: [
          signerInput({ full_name: 'Asha Rao' }),
          signerInput({ full_name: 'Vikram Singh', elements: [signatureAt(1, 100, 300)] }),
        ],
      }),
    );
    const [first, second] = session.signers;
    const { page, errors, close } = await open(second.invite_url as string);
    try {
      await page.getByRole('button', { name: 'Sign the document' }).waitFor();
      expect(await page.locator('[data-step="waiting"]').count()).toBe(0);
      await page.getByLabel('I have read the document and I agree to sign it electronically.').check();
      await page.getByRole('button', { name: 'Sign the document' }).click();
      await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
      expect(await page.locator('h1').textContent()).toBe('You have signed “contract.pdf”');
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
    expect((await details(session.client_id)).status).toBe('pending');
    expect((await signerCall('POST', '/sign', first.token, { consent: true })).status).toBe(200);
    expect((await details(session.client_id)).status).toBe('completed');
  });

  describe('on a phone (390 x 844)', () => {
    const inViewport = (page: Page, selector: string) =>
      page.evaluate((css) => {
        const box = document.querySelector(css)?.getBoundingClientRect();
        const visible = !!box && box.width > 0 && box.height > 0;
        return visible && box!.top >= 0 && box!.bottom <= window.innerHeight && box!.left >= 0 && box!.right <= window.innerWidth;
      }, selector);

    it('the action is on screen without scrolling, and takes the signer to the step', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const { page, errors, close } = await open(session.signers[0].invite_url as string, PHONE);
      try {
        await page.getByRole('heading', { name: 'Sign the document' }).waitFor();
        await renderAllPages(page);
        await page.evaluate(() => window.scrollTo(0, 0));
        // The panel itself is far below (after every page); the bar is at the bottom of the screen.
        expect(await inViewport(page, '#steps')).toBe(false);
        expect(await page.evaluate(() => window.scrollY)).toBe(0);
        const bar = page.locator('.action-bar__button');
        expect(await bar.textContent()).toBe('Sign: go to the signing steps ↓');
        expect(await inViewport(page, '.action-bar__button')).toBe(true);
        await bar.click();
        await expect.poll(() => focusedId(page), { timeout: 30_000 }).toBe('step-heading');
        await expect.poll(() => inViewport(page, '#steps h2'), { timeout: 30_000 }).toBe(true);
        expect(await seriousAxeViolations(page)).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await close();
      }
    });

    it('zooms the pages (buttons; pinch zoom is not blocked), drawing them again at the new size', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const { page, errors, close } = await open(session.signers[0].invite_url as string, PHONE);
      try {
        await renderAllPages(page);
        const first = page.locator('canvas.page-canvas').first();
        const size = () =>
          first.evaluate((canvas: HTMLCanvasElement) => ({ css: canvas.getBoundingClientRect().width, bitmap: canvas.width }));
        const before = await size();
        expect(before.css).toBeLessThanOrEqual(390);
        await page.getByRole('button', { name: 'Zoom in' }).click();
        await page.getByRole('button', { name: 'Zoom in' }).click();
        expect(await page.locator('.zoom__level').textContent()).toBe('200%');
        await expect.poll(async () => (await size()).css, { timeout: 30_000 }).toBeCloseTo(before.css * 2, 0);
        // Drawn again: twice the pixels, not a stretched bitmap. Every page is drawn again, one after another, so on a
        // loaded machine this takes a while: the ceiling is the test's, not a measure of speed.
        await expect.poll(async () => (await size()).bitmap, { timeout: 240_000 }).toBeGreaterThanOrEqual(before.bitmap * 2 - 2);
        await page.getByRole('button', { name: 'Zoom out' }).click();
        expect(await page.locator('.zoom__level').textContent()).toBe('150%');
        // Pinch: the viewport allows scaling, and nothing turns touch gestures off.
        const viewport = (await page.locator('meta[name="viewport"]').getAttribute('content')) ?? '';
        expect(viewport).not.toMatch(/user-scalable\s*=\s*(no|0)|maximum-scale/);
        expect(await page.locator('.pages').evaluate((list) => getComputedStyle(list).touchAction)).toBe('auto');
        expect(await seriousAxeViolations(page)).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await close();
      }
    }, 360_000);

    it('no focus box around the title on load (focus is still there for screen readers); keyboard focus is visible', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const { page, errors, close } = await open(session.signers[0].invite_url as string, PHONE);
      try {
        await page.getByRole('heading', { name: 'Sign the document' }).waitFor();
        await expect.poll(() => focusedId(page), { timeout: 30_000 }).toBe('doc-title');
        const outline = () => page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
        expect(await outline()).toBe('none');
        await page.keyboard.press('Tab');
        expect(await page.evaluate(() => document.activeElement?.tagName)).not.toBe('H1');
        expect(await outline()).toBe('solid');
        expect(errors).toEqual([]);
      } finally {
        await close();
      }
    });

    it('shows times in Indian Standard Time, named', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const { page, errors, close } = await open(session.signers[0].invite_url as string, PHONE);
      try {
        const fact = page.locator('.fact', { hasText: 'Link valid until' }).locator('dd');
        await fact.waitFor();
        const expires = new Date((await details(session.client_id)).expires_at);
        const ist = new Date(expires.getTime() + 330 * 60_000);
        const hour = ist.getUTCHours() % 12 || 12;
        const minute = String(ist.getUTCMinutes()).padStart(2, '0');
        expect(await fact.textContent()).toMatch(new RegExp(`\\b0?${hour}:${minute}\\s?(am|pm) IST$`, 'i'));
        expect(errors).toEqual([]);
      } finally {
        await close();
      }
    });
  });

  describe('sessions that cannot be signed', () => {
    async function screenOf(url: string) {
      const { page, errors, close } = await open(url);
      try {
        const screen = page.locator('[data-screen]');
        await screen.waitFor();
        await expect.poll(() => focusedId(page), { timeout: 30_000 }).toBe('message-title');
        return {
          name: await screen.getAttribute('data-screen'),
          title: await page.locator('h1').textContent(),
          text: await page.locator('main').innerText(),
          // The screen's own actions (the header's language switch is on every screen).
          buttons: await page.locator('main').getByRole('button').allTextContents(),
          axe: await seriousAxeViolations(page),
          errors,
        };
      } finally {
        await close();
      }
    }

    it('cancelled', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId, { sender: 'Priya Menon' }));
      expect(
        (await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } })).status,
      ).toBe(200);
      const shown = await screenOf(session.signers[0].invite_url as string);
      expect(shown).toMatchObject({
        name: 'cancelled',
        title: 'This signing request was cancelled',
        buttons: [],
        axe: [],
        errors: [],
      });
      expect(shown.text).toContain('Priya Menon cancelled the request to sign “contract.pdf”');
    });

    it('expired', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId));
      await app.services.orm.em
        .fork()
        .getConnection()
        .execute(`update esign_sessions set expires_at = now() - interval '1 second' where id = ?`, [session.client_id]);
      expect(await expireDueSessions(app.services, app.services.orm.em.fork(), { ids: [session.client_id] })).toEqual([
        session.client_id,
      ]);
      const shown = await screenOf(session.signers[0].invite_url as string);
      expect(shown).toMatchObject({ name: 'expired', title: 'This signing link has expired', buttons: [], axe: [], errors: [] });
    });

    it('completed, with and without downloads allowed', async () => {
      for (const allowDownload of [true, false]) {
        const session: SessionJson = await createSession(
          app,
          owner.token,
          sessionBody(fileId, { allow_download: allowDownload }),
        );
        expect((await signerCall('POST', '/sign', session.signers[0].token, { consent: true })).status).toBe(200);
        const shown = await screenOf(session.signers[0].invite_url as string);
        expect(shown).toMatchObject({ name: 'done', title: 'You have signed “contract.pdf”', axe: [], errors: [] });
        expect(shown.buttons).toEqual(allowDownload ? ['Download the signed document'] : []);
      }
    });

    it('a signer who failed (Aadhaar eSign attempts used up)', async () => {
      const session = await createSession(
        app,
        owner.token,
        sessionBody(fileId, { sign_type: 'aadhaar', max_retry: 1, signers: [signerInput({ full_name: 'Asha Rao' })] }),
      );
      // The one attempt: the ESP's authentication fails (wrong OTPs until it gives up).
      expect((await signAsAadhaar(app, session.signers[0].token, { failAuthentication: true })).status).toBe(409);
      const shown = await screenOf(session.signers[0].invite_url as string);
      expect(shown).toMatchObject({
        name: 'failed',
        title: 'You can no longer sign this document',
        buttons: [],
        axe: [],
        errors: [],
      });
    });

    it('an unknown token', async () => {
      const shown = await screenOf(`${app.url}/sign/not-a-real-token`);
      expect(shown).toMatchObject({ name: 'invalid', title: 'This signing link is not valid', buttons: [], axe: [] });
      expect(unexpected(shown.errors, 401)).toEqual([]);
    });
  });
});
