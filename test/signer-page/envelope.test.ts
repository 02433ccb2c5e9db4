import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_OTP } from '../../src/modules/sandbox/esp/sandbox-esp';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { DESKTOP, hasChromium, PHONE, seriousAxeViolations, useBrowser, watchPage } from '../helpers/browser';
import { rest } from '../helpers/clients';
import { FOUR_PAGE_PDF, initializeEsign, signatureAt, signerInput, uploadPdf } from '../helpers/factories';
import { MINIMAL_PDF } from '../helpers/fixtures';

const SANDBOX_AADHAAR = '234123412346';

/**
 * The signing page of an envelope: the documents one after another (a list, where the signer is, how many opened,
 * Previous / Next), on a phone and a desktop; an Aadhaar signer of six documents authenticates twice (the page says
 * so before and between), and every document is signed at the end.
 */
describe.skipIf(!hasChromium)('the signing page of an envelope, in a browser', () => {
  let app: TestApp;
  let owner: TestUser;
  let files: string[];
  const browser = useBrowser();

  beforeAll(async () => {
    app = await startTestApp({ env: { ESP_SANDBOX_TIMEOUT_SECONDS: '600' } });
    owner = await app.createUser();
    files = [await uploadPdf(app, owner.token, FOUR_PAGE_PDF, 'agreement.pdf')];
    for (let index = 1; index < 6; index++) files.push(await uploadPdf(app, owner.token, MINIMAL_PDF, `annexure-${index}.pdf`));
  });
  afterAll(async () => app?.close());

  async function sixDocumentAadhaarSession() {
    const created = await initializeEsign(app, owner.token, {
      sign_type: 'aadhaar',
      documents: files.map((file_id, index) => ({ file_id, name: index === 0 ? 'Loan agreement' : `Annexure ${index}` })),
      signers: [
        signerInput({
          full_name: 'Asha Rao',
          elements: files.map((_, document) => ({ ...signatureAt(0), document })),
        }),
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.data!;
  }

  const heading = (page: Page) => page.locator('#step-heading');
  const count = (page: Page) => page.locator('.envelope__count').textContent();
  const shownDocument = (page: Page) => page.locator('section.document').getAttribute('data-document');

  /** Consent on the signing page, then the ESP's pages: the Aadhaar number, the OTP, back here. */
  async function throughEspInBrowser(page: Page, button: string) {
    await page.getByLabel(/I agree to authenticate with Aadhaar/).check();
    await page.getByRole('button', { name: button, exact: true }).click();
    await page.getByRole('textbox', { name: 'Aadhaar number' }).fill(SANDBOX_AADHAAR);
    await page.getByLabel(/I consent to this eSign Service Provider/).check();
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByLabel(/One-time password/).fill(SANDBOX_OTP);
    await page.getByRole('button', { name: 'Sign', exact: true }).click();
  }

  for (const [device, options] of [
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const) {
    it(`on a ${device}: the documents one after another, then two authentications sign all six`, async () => {
      const session = await sixDocumentAadhaarSession();
      const context = await browser().newContext({ ...options, reducedMotion: 'reduce' });
      const page = await context.newPage();
      const { errors } = watchPage(page);
      try {
        await page.goto(session.signers[0]!.invite_url as string);
        await page.getByRole('navigation', { name: 'Documents in this request' }).waitFor({ timeout: 30_000 });
        await expect.poll(() => count(page)).toBe('Document 1 of 6: Loan agreement');
        await expect.poll(() => page.locator('section.document').getAttribute('data-pages'), { timeout: 30_000 }).toBe('4');
        expect(await page.locator('.envelope__item').allTextContents()).toEqual([
          '1.Loan agreementYou sign this',
          ...[1, 2, 3, 4, 5].map((index) => `${index + 1}.Annexure ${index}You sign this`),
        ]);

        await page.getByRole('button', { name: 'Next document' }).click();
        await expect.poll(() => count(page)).toBe('Document 2 of 6: Annexure 1');
        await expect.poll(() => shownDocument(page), { timeout: 30_000 }).toBe('1');
        expect(await page.locator('section.document').getAttribute('data-pages')).toBe('1');
        await page.locator('.envelope__item[data-document="5"]').click();
        await expect.poll(() => shownDocument(page), { timeout: 30_000 }).toBe('5');
        expect(await page.locator('.envelope__opened').textContent()).toBe('You have opened 3 of 6 documents.');
        expect(await page.locator('.envelope__item[aria-current="true"]').getAttribute('data-document')).toBe('5');
        // Nothing runs off the side of a phone's screen.
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
        expect(await seriousAxeViolations(page)).toEqual([]);

        await expect.poll(() => heading(page).textContent(), { timeout: 30_000 }).toBe('Sign with Aadhaar eSign');
        expect(await page.locator('.esp-batches').textContent()).toContain('you authenticate 2 times');
        await throughEspInBrowser(page, 'Continue to Aadhaar eSign');
        await page.locator('[data-step="sign"][data-esp="held"]').waitFor({ timeout: 30_000 });
        expect(await heading(page).textContent()).toBe('Batch 2 of 2: sign the next documents');
        await throughEspInBrowser(page, 'Continue to the next batch');
        await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });

        const documents = (
          await rest<any[]>(app, 'GET', '/esign/documents', { token: owner.token, query: { client_id: session.client_id } })
        ).body.data!;
        expect(documents.map((document) => document.status)).toEqual(Array(6).fill('completed'));
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }
});
