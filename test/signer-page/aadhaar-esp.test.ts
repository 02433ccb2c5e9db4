import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNER_PAGE_CSP, signerPageCsp } from '../../src/modules/signer-journey/page/signer-page';
import { createRootCa } from '../../src/modules/signing/certificates';
import { buildEsignAcknowledgement } from '../../src/modules/signing/esp/cca/esign-ack';
import { SANDBOX_OTP } from '../../src/modules/sandbox/esp/sandbox-esp';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { DESKTOP, PHONE, hasChromium, seriousAxeViolations, useBrowser, watchPage } from '../helpers/browser';
import { rest, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signerInput, throughEsp, uploadPdf, type SessionJson } from '../helpers/factories';
import { makePkcs12 } from '../helpers/pfx';

/**
 * Aadhaar eSign the CCA way, in Chromium: the signing page takes the signer's consent and hands them over to the
 * eSign Service Provider (the sandbox ESP gateway this service mounts at /sandbox/esp) with an auto-submitted form;
 * the signer gives the Aadhaar number and the OTP on the ESP's own pages; the ESP answers the service (2.1: through
 * the browser, 3.2: server to server) and sends the signer back to /sign/return, which returns to /sign/{token}.
 */

const SANDBOX_AADHAAR = '234123412346';
const ESP_FIELDS = ['Content-Type', 'aspTxnID', 'eSignRequest'];
const RETURN_PATH_KEY = 'esign.signerPath';

/** The page's errors without the failed loads of `status` that the test provoked on purpose. */
const unexpected = (errors: string[], status: number) =>
  errors.filter((error) => !error.includes(`status of ${status}`) && !error.startsWith(`http ${status} `));

interface EspStart {
  txn: string;
  esp_url: string;
  fields: Record<string, string>;
  expires_at: string;
}

/**
 * A signer's browser at the sandbox ESP (2.1), played over HTTP: the request form, the Aadhaar page, the OTP page,
 * then the page that carries the response back, posted to the service as the browser would.
 */
async function signAtEspOverHttp(start: EspStart): Promise<number> {
  const pages = await throughEsp(start.esp_url, start.fields, { aadhaar: SANDBOX_AADHAAR, code: SANDBOX_OTP });
  expect(pages.entry.status).toBe(200);
  expect(pages.numberPage.status).toBe(200);
  expect(pages.last.status).toBe(200);
  return pages.delivered!.status;
}

describe('the signing page’s CSP with an ESP elsewhere', () => {
  it('lets the page post its form to each configured ESP origin that is not its own, and nowhere else', () => {
    expect(signerPageCsp('https://esign.example', ['https://esign.example/sandbox/esp'])).toBe(SIGNER_PAGE_CSP);
    const csp = signerPageCsp('https://esign.example', [
      'https://esp.example.net/esign/2.1',
      'https://esp.example.net/esign/3.2',
      'https://esign.example/sandbox/esp',
    ]);
    expect(csp.split('; ').find((directive) => directive.startsWith('form-action'))).toBe(
      "form-action 'self' https://esp.example.net",
    );
    expect(csp.replace(' https://esp.example.net', '')).toBe(SIGNER_PAGE_CSP);
  });
});

describe.skipIf(!hasChromium)('Aadhaar eSign through the ESP, in a browser', () => {
  const browser = useBrowser();

  /** A fresh browser context (its own sessionStorage) with one page; `errors` collects page errors and CSP refusals. */
  async function open(url: string, options: BrowserContextOptions = DESKTOP) {
    const context = await browser().newContext({ ...options, reducedMotion: 'reduce' });
    const page = await context.newPage();
    const watched = watchPage(page);
    await page.goto(url);
    return { page, errors: watched.errors, close: () => context.close() };
  }

  const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '');

  /** On the signing page: consent, then "Continue to Aadhaar eSign" (or "Try again"), and on to the ESP's first page. */
  async function continueToEsp(page: Page, button = 'Continue to Aadhaar eSign') {
    await page.getByLabel(/I agree to authenticate with Aadhaar/).check();
    await page.getByRole('button', { name: button, exact: true }).click();
    // 2.1: the page posts the request to the ESP's gateway; 3.2: it opens the ESP's authentication page with txnref.
    await page.waitForURL(/\/sandbox\/esp(\/authpage)?$/);
    await page.getByRole('heading', { name: 'Sign with Aadhaar', exact: true }).waitFor();
  }

  /** On the ESP's first page: the Aadhaar number and the ESP's own consent, on to the OTP page. */
  async function giveAadhaarNumber(page: Page) {
    await page.getByRole('textbox', { name: 'Aadhaar number' }).fill(SANDBOX_AADHAAR);
    await page.getByLabel(/I consent to this eSign Service Provider/).check();
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByRole('heading', { name: 'Enter the OTP' }).waitFor();
  }

  async function giveOtp(page: Page, otp: string) {
    await page.getByLabel(/One-time password/).fill(otp);
    await page.getByRole('button', { name: 'Sign', exact: true }).click();
  }

  describe('eSign 2.1: the browser carries the response', () => {
    let app: TestApp;
    let owner: TestUser;
    let fileId: string;

    beforeAll(async () => {
      app = await startTestApp();
      owner = await app.createUser();
      fileId = await uploadPdf(app, owner.token);
    });
    afterAll(async () => app?.close());

    const details = async (clientId: string) =>
      (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data;

    /** At the ESP: the Aadhaar number and the right OTP; back on the signing page, done, and the session completed. */
    async function signAtEspUntilDone(page: Page, clientId: string) {
      await giveAadhaarNumber(page);
      await giveOtp(page, SANDBOX_OTP);
      await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
      const read = await details(clientId);
      expect(read.status).toBe('completed');
      expect(read.signers[0].aadhaar_cert_details.name).toBe('Asha Rao');
    }

    const aadhaarSession = (overrides: Record<string, unknown> = {}): Promise<SessionJson> =>
      createSession(
        app,
        owner.token,
        sessionBody(fileId, { sign_type: 'aadhaar', signers: [signerInput({ full_name: 'Asha Rao' })], ...overrides }),
      );

    it('signs end to end: consent here, the number and a wrong OTP at the ESP, then the right one, and back to done', async () => {
      const session = await aadhaarSession({ allow_download: true });
      const token = session.signers[0].token;
      const { page, errors, close } = await open(session.signers[0].invite_url as string);
      try {
        await page.getByRole('heading', { name: 'Sign with Aadhaar eSign' }).waitFor();
        expect(await page.locator('.facts').innerText()).toContain('Aadhaar eSign');
        // Nothing of the old steps: the number is typed at the ESP only.
        expect(await page.getByLabel('Aadhaar number').count()).toBe(0);
        expect(await seriousAxeViolations(page)).toEqual([]);

        // Without consent the page does not leave.
        const go = page.getByRole('button', { name: 'Continue to Aadhaar eSign' });
        const consent = page.getByLabel(/I agree to authenticate with Aadhaar/);
        await go.click();
        await expect.poll(() => consent.getAttribute('aria-invalid')).toBe('true');
        expect(await focusedId(page)).toBe(await consent.getAttribute('id'));
        expect(page.url()).toBe(session.signers[0].invite_url);

        // The hand-over: a form POST of exactly the fields /esp/start answered, in this tab.
        const handedOver = page.waitForRequest((request) => request.method() === 'POST' && /\/sandbox\/esp$/.test(request.url()));
        await continueToEsp(page);
        const request = await handedOver;
        expect(request.headers()['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
        const posted = new URLSearchParams(request.postData() ?? '');
        expect([...posted.keys()].sort()).toEqual(ESP_FIELDS);
        expect(posted.get('eSignRequest')).toBeTruthy();
        expect(await page.evaluate((key) => sessionStorage.getItem(key), RETURN_PATH_KEY)).toBe(`/sign/${token}`);

        await giveAadhaarNumber(page);
        await giveOtp(page, '000000');
        await expect.poll(() => page.locator('#otp-error').textContent()).toBe('The OTP is not correct. 2 attempts left.');
        await giveOtp(page, SANDBOX_OTP);

        // Back through /sign/return to this signer's page, which says it is done.
        await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
        expect(page.url()).toBe(`${app.url}/sign/${token}`);
        expect(await page.locator('h1').textContent()).toBe('You have signed “contract.pdf”');
        expect(await page.getByRole('button', { name: 'Download the signed document' }).count()).toBe(1);
        expect(await seriousAxeViolations(page)).toEqual([]);

        const read = await details(session.client_id);
        expect(read.status).toBe('completed');
        expect(read.signers[0].status).toBe('completed');
        expect(read.signers[0].aadhaar_cert_details.name).toBe('Asha Rao');
        // The wrong OTP is the ESP's page answering 400, as it should.
        expect(unexpected(errors, 400)).toEqual([]);
      } finally {
        await close();
      }
    });

    it('on a phone, cancelling at the ESP costs no attempt: the page says “You cancelled”, and starting again signs', async () => {
      const session = await aadhaarSession();
      const token = session.signers[0].token;
      const { page, errors, close } = await open(session.signers[0].invite_url as string, PHONE);
      try {
        await continueToEsp(page);
        await giveAadhaarNumber(page);
        await page.getByRole('button', { name: 'Cancel' }).click();

        await page.locator('[data-step="sign"][data-esp="failed"]').waitFor({ timeout: 30_000 });
        expect(await page.getByRole('heading', { name: 'You cancelled Aadhaar eSign' }).count()).toBe(1);
        // Back from the ESP, the step (where the outcome is) has focus, and the outcome is announced.
        await expect.poll(() => focusedId(page)).toBe('step-heading');
        const outcome = (await page.locator('.esp-outcome').textContent()) ?? '';
        expect(outcome).toBe(
          'You cancelled at the eSign Service Provider, so nothing was signed. Cancelling does not use up an attempt; you can start again.',
        );
        expect(await page.locator('main').innerText()).not.toMatch(/signer cancelled|attempts? left/i);
        await expect.poll(() => page.locator('#status').textContent()).toBe(outcome);
        expect(await seriousAxeViolations(page)).toEqual([]);
        // No attempt used: the signer API says so, and the ESP's code is the one ESPs send after an OTP was generated.
        const view = (await signerApi<any>(app, 'GET', '/session', token)).body.data;
        expect(view.signer.attempts_left).toBe(3);
        expect(view.signer.esp_transaction).toMatchObject({ status: 'failed', error_code: 'ESP-945', cancelled_by_signer: true });
        expect((await details(session.client_id)).signers[0].status).toBe('pending');

        await continueToEsp(page, 'Start again');
        await signAtEspUntilDone(page, session.client_id);
        expect(errors).toEqual([]);
      } finally {
        await close();
      }
    });

    it('with max_retry 1, a failed authentication at the ESP fails the signer: the failed screen, for good', async () => {
      const session = await aadhaarSession({ max_retry: 1 });
      const { page, errors, close } = await open(session.signers[0].invite_url as string);
      try {
        await continueToEsp(page);
        await giveAadhaarNumber(page);
        // Three wrong OTPs: the ESP ends the transaction with a failed authentication (not a cancel).
        for (let i = 0; i < 3; i++) {
          await giveOtp(page, '000000');
          if (i < 2) await expect.poll(() => page.locator('#otp-error').textContent()).toContain(`${2 - i} attempt`);
        }
        await page.locator('[data-screen="failed"]').waitFor({ timeout: 30_000 });
        await expect.poll(() => focusedId(page)).toBe('message-title');
        expect(await page.locator('h1').textContent()).toBe('You can no longer sign this document');
        expect(await page.locator('main').getByRole('button').allTextContents()).toEqual([]);
        expect(await seriousAxeViolations(page)).toEqual([]);
        expect((await details(session.client_id)).signers[0].status).toBe('failed');
        expect(unexpected(errors, 400)).toEqual([]);
      } finally {
        await close();
      }
      // A new ESP transaction is refused.
      const again = await signerApi(app, 'POST', '/esp/start', session.signers[0].token, { consent: true });
      expect(again.status).toBe(409);
    });

    it('an open transaction shows the waiting state, and the page picks up the outcome by itself', async () => {
      const session = await aadhaarSession();
      const token = session.signers[0].token;
      const { page, errors, close } = await open(session.signers[0].invite_url as string);
      try {
        await page.getByRole('heading', { name: 'Sign with Aadhaar eSign' }).waitFor();
        // Meanwhile the signer left for the ESP from another tab: this page's start is refused (409), and it shows
        // the open transaction instead.
        const started = await signerApi<EspStart>(app, 'POST', '/esp/start', token, { consent: true });
        expect(started.status).toBe(200);
        const start = started.body.data!;
        expect(Object.keys(start.fields).sort()).toEqual(ESP_FIELDS);
        await page.getByLabel(/I agree to authenticate with Aadhaar/).check();
        await page.getByRole('button', { name: 'Continue to Aadhaar eSign' }).click();

        await page.getByRole('heading', { name: 'Waiting for the eSign provider…' }).waitFor();
        await expect.poll(() => focusedId(page)).toBe('step-heading');
        expect(await page.locator('[data-step="sign"]').getAttribute('data-esp')).toBe('pending');
        expect(await page.locator('.step').innerText()).toContain('Left the eSign provider’s pages before finishing?');
        expect(await page.getByRole('button', { name: 'Start again' }).count()).toBe(1);
        await expect.poll(() => page.locator('#status').textContent()).toBe('Waiting for the eSign provider.');
        expect(page.url()).toBe(session.signers[0].invite_url);
        expect(await seriousAxeViolations(page)).toEqual([]);

        // The other tab finishes at the ESP; this page reads the session every 2 s and shows the outcome.
        expect(await signAtEspOverHttp(start)).toBeLessThan(400);
        await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
        expect((await details(session.client_id)).signers[0].aadhaar_cert_details.name).toBe('Asha Rao');
        // The refused start is a 409 the page expected.
        expect(unexpected(errors, 409)).toEqual([]);
      } finally {
        await close();
      }
    });

    it('a signer who left the ESP’s pages starts again at once; the abandoned transaction’s answer is refused', async () => {
      const session = await aadhaarSession();
      const token = session.signers[0].token;
      const first = await signerApi<EspStart>(app, 'POST', '/esp/start', token, { consent: true });
      expect(first.status).toBe(200);
      const { page, errors, close } = await open(session.signers[0].invite_url as string);
      try {
        await page.getByRole('heading', { name: 'Waiting for the eSign provider…' }).waitFor();
        await page.getByRole('button', { name: 'Start again' }).click();
        await page.getByRole('heading', { name: 'Sign with Aadhaar eSign' }).waitFor();
        await expect.poll(() => focusedId(page)).toBe('step-heading');
        await continueToEsp(page);

        // The first transaction is closed: its answer, arriving now, is refused.
        expect(await signAtEspOverHttp(first.body.data!)).toBe(400);

        await signAtEspUntilDone(page, session.client_id);
        expect(errors).toEqual([]);
      } finally {
        await close();
      }
    });

    it('a transaction that timed out: the page says so and offers to try again', async () => {
      const session = await aadhaarSession();
      const token = session.signers[0].token;
      expect((await signerApi(app, 'POST', '/esp/start', token, { consent: true })).status).toBe(200);
      const { page, errors, close } = await open(session.signers[0].invite_url as string);
      try {
        await page.getByRole('heading', { name: 'Waiting for the eSign provider…' }).waitFor();
        // The ESP never answered: the transaction's time runs out while the page waits.
        await app.services.orm.em
          .fork()
          .getConnection()
          .execute(`update esp_transactions set expires_at = now() - interval '1 second' where signer_id = ?`, [
            session.signers[0].signer_id,
          ]);
        await page.locator('[data-step="sign"][data-esp="expired"]').waitFor({ timeout: 15_000 });
        expect(await page.getByRole('heading', { name: 'Aadhaar eSign timed out' }).count()).toBe(1);
        expect(await page.locator('.esp-outcome').textContent()).toContain('did not confirm your signature in time');
        expect(await seriousAxeViolations(page)).toEqual([]);
        // Nothing was counted against the signer; trying again goes back to the ESP.
        expect((await details(session.client_id)).signers[0].status).toBe('pending');
        await continueToEsp(page, 'Try again');
        expect(errors).toEqual([]);
      } finally {
        await close();
      }
    });

    it('the return page goes back to the signing page; without the stored path it says to open the link again', async () => {
      const response = await fetch(new URL('/sign/return?txn=esptxn_x', app.url));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
      const html = await response.text();
      expect(html.match(/<script\b[^>]*>/g)!.every((tag) => / src="\/signer-assets\//.test(tag))).toBe(true);
      expect(html).not.toMatch(/<style|style="/);

      // Another browser (or the storage cleared): nothing to go back to.
      const lost = await open(`${app.url}/sign/return?txn=esptxn_x`);
      try {
        await lost.page.locator('[data-screen="return-lost"]').waitFor();
        expect(await lost.page.locator('h1').textContent()).toBe('Open your signing link again');
        await expect.poll(() => focusedId(lost.page)).toBe('return-title');
        expect(await lost.page.locator('main').innerText()).toContain('Open the signing link from your invitation');
        expect(await seriousAxeViolations(lost.page)).toEqual([]);
        expect(lost.errors).toEqual([]);

        // With the path the signing page left (this tab), straight back to it; a stored path that is not a
        // signing page's is ignored.
        const session = await aadhaarSession();
        const token = session.signers[0].token;
        await lost.page.evaluate(([key]) => sessionStorage.setItem(key, 'https://elsewhere.example/'), [RETURN_PATH_KEY]);
        await lost.page.reload();
        await lost.page.locator('[data-screen="return-lost"]').waitFor();
        await lost.page.evaluate(([key, path]) => sessionStorage.setItem(key, path), [RETURN_PATH_KEY, `/sign/${token}`]);
        await lost.page.goto(`${app.url}/sign/return?txn=esptxn_x`);
        await lost.page.getByRole('heading', { name: 'Sign with Aadhaar eSign' }).waitFor();
        expect(lost.page.url()).toBe(`${app.url}/sign/${token}`);
        expect(lost.errors).toEqual([]);
      } finally {
        await lost.close();
      }
    });
  });

  describe('eSign 3.2: the ESP posts the response itself', () => {
    let app: TestApp;
    let owner: TestUser;
    let fileId: string;

    let dir: string;
    let refusing: ReturnType<express.Express['listen']>;

    beforeAll(async () => {
      // A second 3.2 ESP that refuses every request in its signed acknowledgement.
      dir = mkdtempSync(path.join(os.tmpdir(), 'esp32-page-'));
      const esp = createRootCa('A refusing ESP', 'Some ESP');
      writeFileSync(path.join(dir, 'asp.p12'), makePkcs12({ password: 'asp-secret', commonName: 'Test ASP' }));
      const fake = express();
      fake.post('/esign', express.text({ type: () => true, limit: '1mb' }), (req, res) => {
        const txn = /\btxn="([^"]+)"/.exec(String(req.body))?.[1] ?? 'unknown';
        const refusal = { status: 'refused' as const, errCode: 'ESP-101', errMsg: 'ASP not enabled for this service' };
        res
          .type('application/xml')
          .send(buildEsignAcknowledgement({ version: '3.2', txn, resCode: 'R', signer: esp, ...refusal }));
      });
      refusing = fake.listen(0, '127.0.0.1');
      await new Promise((resolve) => refusing.once('listening', resolve));
      const espUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
      app = await startTestApp({
        env: {
          ESP_SANDBOX_VERSION: '3.2',
          ESP_REFUSING_URL: `${espUrl}/esign`,
          ESP_REFUSING_AUTH_URL: `${espUrl}/authpage`,
          ESP_REFUSING_VERSION: '3.2',
          ESP_REFUSING_CERT: esp.certificatePem,
          ESP_REFUSING_ASP_ID: 'TEST-ASP',
          ESP_REFUSING_ASP_PFX: path.join(dir, 'asp.p12'),
          ESP_REFUSING_ASP_PFX_PASSWORD: 'asp-secret',
        },
      });
      owner = await app.createUser();
      fileId = await uploadPdf(app, owner.token);
    });
    afterAll(async () => {
      await app?.close();
      await new Promise((resolve) => refusing?.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    });

    it('an ESP that refuses the request: the page says why, stays here, and no attempt is lost', async () => {
      const session = await createSession(
        app,
        owner.token,
        sessionBody(fileId, {
          sign_type: 'aadhaar',
          backend: 'refusing',
          max_retry: 1,
          signers: [signerInput({ full_name: 'Asha Rao' })],
        }),
      );
      const { page, errors, close } = await open(session.signers[0].invite_url as string);
      try {
        await page.getByLabel(/I agree to authenticate with Aadhaar/).check();
        await page.getByRole('button', { name: 'Continue to Aadhaar eSign', exact: true }).click();
        // The message shown by the action (the screen reader's live region repeats it).
        await page
          .locator('.action-error', {
            hasText: 'The eSign Service Provider refused the request: ASP not enabled for this service.',
          })
          .waitFor();
        expect(await page.getByText('ESP-101').count()).toBe(0);
        expect(new URL(page.url()).pathname).toBe(`/sign/${session.signers[0].token}`);
        const signer = (await signerApi(app, 'GET', '/session', session.signers[0].token)).body.data.signer;
        expect(signer).toMatchObject({ status: 'pending', attempts_left: 1 });
        expect(signer.esp_transaction).toMatchObject({ status: 'failed', error_code: 'ESP-101' });
        expect(unexpected(errors, 503)).toEqual([]);
      } finally {
        await close();
      }
    });

    it('signs end to end; back before the response is read, the page waits for it', async () => {
      const session = await createSession(
        app,
        owner.token,
        sessionBody(fileId, { sign_type: 'aadhaar', signers: [signerInput({ full_name: 'Asha Rao' })] }),
      );
      const token = session.signers[0].token;
      const { page, errors, close } = await open(session.signers[0].invite_url as string);
      try {
        // The request went from the service to the ESP; the browser carries only txnref to the ESP's page.
        const handoff = page.waitForRequest((request) => request.url().endsWith('/sandbox/esp/authpage'));
        await continueToEsp(page);
        const posted = new URLSearchParams((await handoff).postData() ?? '');
        expect([...posted.keys()]).toEqual(['txnref']);
        expect(Buffer.from(posted.get('txnref')!, 'base64').toString()).toMatch(/^esptxn_[0-9a-f]{32}\|[0-9a-f-]{36}$/);
        // 3.2 may let the signer choose how to authenticate: the OTP.
        const otpMode = page.getByLabel(/OTP to your Aadhaar-registered mobile/);
        if (await otpMode.count()) await otpMode.check();
        await giveAadhaarNumber(page);

        // The sandbox ESP posts its response before it sends the browser back, so the page would see it at once.
        // The signer's first reads after coming back are answered "still pending" here, as when a real ESP's
        // response comes after the browser; the page waits, reading again, until the real state shows.
        let heldBack = 0;
        await page.route(
          (url) => url.pathname === '/signer-api/session',
          async (route) => {
            const response = await route.fetch();
            const body = await response.json();
            const view = body.data;
            if (heldBack < 2 && view?.signer?.status === 'completed') {
              heldBack++;
              view.session.status = 'pending';
              view.signer.status = 'pending';
              view.signer.eligible = true;
              view.signer.esp_transaction = { ...view.signer.esp_transaction, status: 'pending' };
            }
            await route.fulfill({ response, json: body });
          },
        );
        await giveOtp(page, SANDBOX_OTP);
        await page.getByRole('heading', { name: 'Waiting for the eSign provider…' }).waitFor({ timeout: 30_000 });
        await expect.poll(() => focusedId(page)).toBe('step-heading');
        await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
        expect(heldBack).toBe(2);
        expect(page.url()).toBe(`${app.url}/sign/${token}`);

        const read = (
          await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } })
        ).body.data;
        expect(read.status).toBe('completed');
        expect(read.signers[0].aadhaar_cert_details.name).toBe('Asha Rao');
        expect(errors).toEqual([]);
      } finally {
        await close();
      }
    });
  });
});
