import type { BrowserContextOptions, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { DESKTOP, PHONE, hasChromium, seriousAxeViolations, useBrowser, watchPage } from '../helpers/browser';
import { rest, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signatureAt, signerInput, uploadPdf } from '../helpers/factories';
import { makePng } from '../helpers/fixtures';

/** One field of each kind a signer fills, a read-only prefilled text and the date of signing, all on page 1. */
function everyKind(): Record<string, unknown>[] {
  const at = (y: number, rest: Record<string, unknown>) => ({ x: 72, y, page: 0, alignment: 'left', ...rest });
  return [
    signatureAt(0, 72, 700),
    at(40, { type: 'initials' }),
    at(70, { type: 'text', label: 'Amount in words', min_length: 3, max_length: 80 }),
    at(100, { type: 'text', label: 'Notes', multiline: true, required: false, height: 60 }),
    at(170, { type: 'number', label: 'Amount', min: 1000, max: 500000, format: 'indian' }),
    at(200, { type: 'date', label: 'Start date', format: 'DD MMM YYYY' }),
    at(230, { type: 'checkbox', label: 'I agree to the terms', required: true }),
    at(260, { type: 'radio', label: 'Repayment', options: ['Monthly', 'Quarterly'] }),
    at(300, { type: 'dropdown', label: 'Branch', options: ['Lucknow', 'Chennai', 'Pune'] }),
    at(330, { type: 'name' }),
    at(360, { type: 'email', required: false }),
    at(390, { type: 'text', label: 'PAN', pattern: '[A-Z]{5}[0-9]{4}[A-Z]', max_length: 10 }),
    at(420, { type: 'text', label: 'Loan number', read_only: true, value: 'LN-2026-0042' }),
    at(450, { type: 'date_signed', format: 'DD/MM/YYYY' }),
    at(480, { type: 'seal', label: 'Company seal', required: false }),
  ];
}

/** What the signer ends with, by label (or type where the field has none). */
const EXPECTED: Record<string, string> = {
  initials: 'AR',
  'Amount in words': 'Two lakh rupees',
  Notes: 'Paid in two parts.\nThe second in March.',
  Amount: '200000',
  'Start date': '2026-12-01',
  'I agree to the terms': 'true',
  Repayment: 'Quarterly',
  Branch: 'Chennai',
  name: 'Asha Rao',
  email: 'asha@example.com',
  PAN: 'ABCDE1234F',
  'Loan number': 'LN-2026-0042',
};

describe.skipIf(!hasChromium)('the fields step of the signing page, in a browser', () => {
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

  const storedElements = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data.signers[0]
      .elements as any[];

  async function freshSession() {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        signers: [signerInput({ full_name: 'Asha Rao', email: 'asha@example.com', elements: everyKind() })],
      }),
    );
    const signer = session.signers[0];
    const elements = signer.elements as { field_id: string; type: string; label: string | null }[];
    const id = (name: string) => elements.find((element) => element.label === name || element.type === name)!.field_id;
    return { session, signer, id };
  }

  /** A browser context with one page; `posts` collects the bodies of every POST /signer-api/fields. */
  async function open(url: string, options: BrowserContextOptions) {
    const context = await browser().newContext({ ...options, reducedMotion: 'reduce', locale: 'en-US' });
    const page = await context.newPage();
    const { errors } = watchPage(page);
    const posts: unknown[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/signer-api/fields')
        posts.push(request.postDataJSON());
    });
    await page.goto(url);
    await expect.poll(() => page.locator('#step-heading').textContent(), { timeout: 30_000 }).toBe('Fill in the fields');
    return { page, errors, posts, close: () => context.close() };
  }

  /** A control by its label, "(required)" or not. */
  const control = (page: Page, label: string): Locator =>
    page.getByLabel(new RegExp(`^${label.replace(/[()]/g, '\\$&')}( \\(required\\))?$`));
  const errorOf = (page: Page, fieldId: string) => page.locator(`[data-field-id="${fieldId}"] .field-error`);
  const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '');

  /** The stored values and fill times after signing: every field's value as EXPECTED, each with its filled_at. */
  async function expectStored(clientId: string, id: (name: string) => string) {
    const elements = await storedElements(clientId);
    const byId = (fieldId: string) => elements.find((element) => element.field_id === fieldId);
    for (const [name, value] of Object.entries(EXPECTED)) {
      expect(byId(id(name)), name).toMatchObject({ value });
      if (name !== 'Loan number') expect(byId(id(name)).filled_at, name).toEqual(expect.any(String));
    }
    expect(byId(id('seal'))).toMatchObject({ value: expect.stringMatching(/^file_/), filled_at: expect.any(String) });
  }

  it('on a desktop: prefilled and read-only fields, the browser refuses bad values, the service’s refusal lands on its control, then all are kept', async () => {
    const { session, signer, id } = await freshSession();
    const { page, errors, posts, close } = await open(signer.invite_url as string, DESKTOP);
    try {
      // Prefilled from the invite; the read-only value and the date of signing are text, not controls.
      expect(await control(page, 'Your initials').inputValue()).toBe('AR');
      expect(await control(page, 'Your full name').inputValue()).toBe('Asha Rao');
      expect(await control(page, 'Your email address').inputValue()).toBe('asha@example.com');
      expect(await page.locator(`.fields-form [data-field-id="${id('Loan number')}"]`).innerText()).toMatch(
        /^Loan number\s+LN-2026-0042$/,
      );
      expect(await page.locator(`.fields-form [data-field-id="${id('date_signed')}"]`).innerText()).toContain(
        'Filled in when you sign.',
      );
      expect(
        await page
          .locator('input, textarea, select')
          .evaluateAll((all) => all.every((el) => (el as HTMLInputElement).labels?.length)),
      ).toBe(true);
      expect(await page.getByText('Amount in words (required)').count()).toBe(1);
      expect(await page.getByText('Notes (required)').count()).toBe(0);

      // The field's box on the page leads to its control.
      await page
        .locator(`.field-box--form[data-field-id="${id('Amount')}"]`)
        .first()
        .click();
      expect(await focusedId(page)).toBe(`field-${id('Amount')}`);

      // Too long, a pattern missed, out of range, a required box not ticked: refused in the browser, nothing sent.
      await control(page, 'Amount in words').fill('x'.repeat(81));
      await control(page, 'PAN').fill('abcde1234f');
      await control(page, 'Amount').fill('999');
      await control(page, 'Start date').fill('2026-12-01');
      await control(page, 'PAN').press('Enter');
      await expect
        .poll(() => errorOf(page, id('Amount in words')).textContent())
        .toBe('Enter at most 80 characters (you have 81).');
      expect(await errorOf(page, id('PAN')).textContent()).toBe('This does not have the expected form ([A-Z]{5}[0-9]{4}[A-Z]).');
      expect(await errorOf(page, id('Amount')).textContent()).toBe('Enter a number from 1000 to 500000.');
      expect(await errorOf(page, id('I agree to the terms')).textContent()).toBe('Tick this box to continue.');
      expect(await errorOf(page, id('Repayment')).textContent()).toBe('Choose one of the options.');
      expect(await control(page, 'PAN').getAttribute('aria-invalid')).toBe('true');
      expect(await control(page, 'PAN').getAttribute('aria-describedby')).toContain(`field-${id('PAN')}-error`);
      await expect
        .poll(() => page.locator('#announcer').textContent())
        .toMatch(/^6 fields need your attention: Amount in words, /);
      expect(await focusedId(page)).toBe(`field-${id('Amount in words')}`);
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(posts).toEqual([]);

      // A required field left empty: the browser says so.
      await control(page, 'Your full name').fill('');
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => errorOf(page, id('name')).textContent()).toBe('Fill in this field.');
      expect(posts).toEqual([]);

      // Every rule the browser knows is kept, but the service reads the email more strictly: its 400 names the field,
      // the message shows next to the control, and nothing is stored.
      await control(page, 'Amount in words').fill(EXPECTED['Amount in words']);
      await control(page, 'Notes').fill(`  ${EXPECTED.Notes}  `);
      await control(page, 'Amount').fill(EXPECTED.Amount);
      await control(page, 'I agree to the terms').check();
      await page.getByRole('radio', { name: 'Quarterly' }).check();
      await control(page, 'Branch').selectOption('Chennai');
      await control(page, 'Your full name').fill('Asha Rao');
      await control(page, 'Your email address').fill('asha@example.c');
      await control(page, 'PAN').fill(EXPECTED.PAN);
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => errorOf(page, id('email')).textContent()).toBe('Must be an email address.');
      expect(posts).toHaveLength(1);
      expect(await focusedId(page)).toBe(`field-${id('email')}`);
      expect((await storedElements(session.client_id)).every((element) => !element.filled_at)).toBe(true);

      // The seal is uploaded when chosen, with a preview; then the values go in one request.
      await control(page, 'Company seal').setInputFiles({
        name: 'seal.png',
        mimeType: 'image/png',
        buffer: Buffer.from(makePng(60, 60)),
      });
      await expect
        .poll(() => page.locator(`[data-field-id="${id('seal')}"] [role="status"]`).textContent())
        .toBe('Image uploaded.');
      expect(await page.locator('.field-preview').isVisible()).toBe(true);
      await control(page, 'Your email address').fill(EXPECTED.email);
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => page.locator('#step-heading').textContent()).toBe('Sign the document');
      expect(posts).toHaveLength(2);
      expect(Object.keys((posts[1] as { values: object }).values)).not.toContain(id('seal'));

      await page.getByLabel('I have read the document and I agree to sign it electronically.').check();
      await page.getByRole('button', { name: 'Sign the document' }).click();
      await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
      await expectStored(session.client_id, id);
      expect(errors.filter((error) => !/http 400 \/signer-api\/fields$|status of 400/.test(error))).toEqual([]);
    } finally {
      await close();
    }
  });

  it('on a phone, by keyboard alone: every control filled, the seal chosen, Enter submits, then signed', async () => {
    const { session, signer, id } = await freshSession();
    const { page, errors, close } = await open(signer.invite_url as string, PHONE);
    try {
      // From the title: the link that skips the document, then Tab from control to control.
      const tab = async () => {
        await page.keyboard.press('Tab');
        return focusedId(page);
      };
      for (
        let i = 0;
        i < 20 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'Go to the signing steps';
        i++
      )
        await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      expect(await tab()).toBe(`field-${id('initials')}`); // AR, prefilled
      expect(await tab()).toBe(`field-${id('Amount in words')}`);
      await page.keyboard.type(EXPECTED['Amount in words']);
      expect(await tab()).toBe(`field-${id('Notes')}`);
      await page.keyboard.type('Paid in two parts.');
      await page.keyboard.press('Enter'); // a new line in a multi-line field
      await page.keyboard.type('The second in March.');
      expect(await tab()).toBe(`field-${id('Amount')}`);
      await page.keyboard.type(EXPECTED.Amount);
      expect(await tab()).toBe(`field-${id('Start date')}`);
      await page.keyboard.type('12012026'); // en-US: month, day, year
      // The date control's own parts take Tab stops: on to the checkbox.
      for (let i = 0; i < 4 && (await focusedId(page)) !== `field-${id('I agree to the terms')}`; i++)
        await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe(`field-${id('I agree to the terms')}`);
      await page.keyboard.press('Space');
      expect(await tab()).toBe(`field-${id('Repayment')}`); // the group's first option
      await page.keyboard.press('ArrowDown'); // arrows move and choose
      expect(await page.getByRole('radio', { name: 'Quarterly' }).isChecked()).toBe(true);
      expect(await tab()).toBe(`field-${id('Branch')}`);
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      expect(await control(page, 'Branch').inputValue()).toBe('Chennai');
      expect(await tab()).toBe(`field-${id('name')}`);
      expect(await tab()).toBe(`field-${id('email')}`);
      expect(await tab()).toBe(`field-${id('PAN')}`);
      await page.keyboard.type(EXPECTED.PAN);
      expect(await tab()).toBe(`field-${id('seal')}`);
      // Space on the focused file input opens the chooser; a loaded machine has once let a key press go unanswered,
      // so a signer's second press is allowed (the chooser must still open from the keyboard).
      let chooser: import('playwright-core').FileChooser | undefined;
      for (let press = 0; !chooser && press < 3; press++) {
        [chooser] = await Promise.all([
          page.waitForEvent('filechooser', { timeout: 20_000 }).catch(() => undefined),
          page.keyboard.press('Space'),
        ]);
      }
      if (!chooser) throw new Error('Space never opened the file chooser');
      await chooser.setFiles({ name: 'seal.png', mimeType: 'image/png', buffer: Buffer.from(makePng(60, 60)) });
      await expect
        .poll(() => page.locator(`[data-field-id="${id('seal')}"] [role="status"]`).textContent())
        .toBe('Image uploaded.');
      // Back in a text field, Enter submits the step.
      await page.keyboard.press('Shift+Tab');
      expect(await focusedId(page)).toBe(`field-${id('PAN')}`);
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('#step-heading').textContent()).toBe('Sign the document');
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

      for (
        let i = 0;
        i < 10 && (await page.evaluate(() => (document.activeElement as HTMLInputElement).type)) !== 'checkbox';
        i++
      )
        await page.keyboard.press('Tab');
      await page.keyboard.press('Space');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
      await expectStored(session.client_id, id);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });

  it('a required field left empty: the browser says so, and the service refuses to sign naming it', async () => {
    const { signer, id } = await freshSession();
    const refused = await signerApi(app, 'POST', '/sign', signer.token, { consent: true });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('missing_fields');
    expect(refused.body.errors!.map((error) => error.field)).toContain(`values.${id('Amount')}`);

    // Crafted past the browser: a value the service refuses is named, and nothing of the request is kept.
    const crafted = await signerApi(app, 'POST', '/fields', signer.token, {
      values: { [id('Amount in words')]: 'Two lakh rupees', [id('Branch')]: 'Delhi' },
    });
    expect(crafted.status).toBe(400);
    expect(crafted.body.errors).toEqual([{ field: `values.${id('Branch')}`, problem: expect.any(String) }]);
    const view = await signerApi(app, 'GET', '/session', signer.token);
    expect(view.body.data.signer.form.every((field: any) => field.filled_at === null)).toBe(true);

    const { page, posts, close } = await open(signer.invite_url as string, DESKTOP);
    try {
      await control(page, 'Amount in words').fill(EXPECTED['Amount in words']);
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => errorOf(page, id('Amount')).textContent()).toBe('Fill in this field.');
      expect(await control(page, 'Amount').getAttribute('aria-required')).toBe('true');
      expect(posts).toEqual([]);
    } finally {
      await close();
    }
  });
});
