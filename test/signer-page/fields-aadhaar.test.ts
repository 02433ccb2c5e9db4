import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_OTP } from '../../src/modules/sandbox/esp/sandbox-esp';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { DESKTOP, hasChromium, useBrowser, watchPage } from '../helpers/browser';
import { rest, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signatureAt, signerInput, uploadPdf } from '../helpers/factories';

const SANDBOX_AADHAAR = '234123412346';

/**
 * The fields step before Aadhaar eSign: the values are given before the hand-over to the ESP, and a signer who comes
 * back from the ESP (or opens the page while a transaction is open there) lands on the signing step, where the ESP's
 * outcome is, not on the fields again.
 */
describe.skipIf(!hasChromium)('the fields step before Aadhaar eSign, in a browser', () => {
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;
  const browser = useBrowser();

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app?.close());

  async function aadhaarSessionWithField() {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        sign_type: 'aadhaar',
        signers: [
          signerInput({
            full_name: 'Asha Rao',
            elements: [
              signatureAt(0, 72, 700),
              { x: 72, y: 40, page: 0, alignment: 'left', type: 'text', label: 'Employee number', max_length: 10 },
            ],
          }),
        ],
      }),
    );
    const signer = session.signers[0];
    const fieldId = (signer.elements as { field_id: string; type: string }[]).find(
      (element) => element.type === 'text',
    )!.field_id;
    return { session, signer, fieldId };
  }

  async function open(url: string) {
    const context = await browser().newContext({ ...DESKTOP, reducedMotion: 'reduce' });
    const page = await context.newPage();
    const { errors } = watchPage(page);
    await page.goto(url);
    return { page, errors, close: () => context.close() };
  }

  const heading = (page: Page) => page.locator('#step-heading');

  /** Consent on the signing page, then the ESP's first page and the Aadhaar number. */
  async function toEspNumberGiven(page: Page, button: string) {
    await page.getByLabel(/I agree to authenticate with Aadhaar/).check();
    await page.getByRole('button', { name: button, exact: true }).click();
    await page.getByRole('textbox', { name: 'Aadhaar number' }).fill(SANDBOX_AADHAAR);
    await page.getByLabel(/I consent to this eSign Service Provider/).check();
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByRole('heading', { name: 'Enter the OTP' }).waitFor();
  }

  it('fills the fields, hands over to the ESP; back from it the ESP’s outcome shows, then signing keeps the value', async () => {
    const { session, signer, fieldId } = await aadhaarSessionWithField();
    const { page, errors, close } = await open(signer.invite_url as string);
    try {
      await expect.poll(() => heading(page).textContent(), { timeout: 30_000 }).toBe('Fill in the fields');
      await page.getByLabel('Employee number (required)').fill('E-1234');
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => heading(page).textContent()).toBe('Sign with Aadhaar eSign');

      // Back to the fields from the signing step: what was kept is there to change.
      await page.getByRole('button', { name: 'Change the fields' }).click();
      await expect.poll(() => heading(page).textContent()).toBe('Fill in the fields');
      expect(await page.getByLabel('Employee number (required)').inputValue()).toBe('E-1234');
      await page.getByLabel('Employee number (required)').fill('E-1235');
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => heading(page).textContent()).toBe('Sign with Aadhaar eSign');

      // Cancelled at the ESP: back here, the outcome and "Start again", not the fields.
      await toEspNumberGiven(page, 'Continue to Aadhaar eSign');
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.locator('[data-step="sign"][data-esp="failed"]').waitFor({ timeout: 30_000 });
      expect(await heading(page).textContent()).toBe('You cancelled Aadhaar eSign');
      expect(await page.locator('.progress__item--done').allTextContents()).toEqual(['Fill in the fields (done)']);

      await toEspNumberGiven(page, 'Start again');
      await page.getByLabel(/One-time password/).fill(SANDBOX_OTP);
      await page.getByRole('button', { name: 'Sign', exact: true }).click();
      await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });

      const read = (
        await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } })
      ).body.data;
      expect(read.status).toBe('completed');
      expect(read.signers[0].elements.find((element: any) => element.field_id === fieldId)).toMatchObject({
        value: 'E-1235',
        filled_at: expect.any(String),
      });
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });

  it('with a transaction open at the ESP, the page opens on the wait for it, not on the fields', async () => {
    const { signer, fieldId } = await aadhaarSessionWithField();
    expect((await signerApi(app, 'POST', '/fields', signer.token, { values: { [fieldId]: 'E-77' } })).status).toBe(200);
    expect((await signerApi(app, 'POST', '/esp/start', signer.token, { consent: true })).status).toBe(200);
    const { page, errors, close } = await open(signer.invite_url as string);
    try {
      await page.getByRole('heading', { name: 'Waiting for the eSign provider…' }).waitFor({ timeout: 30_000 });
      expect(await page.locator('[data-step="fields"]').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Change the fields' }).count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });
});
