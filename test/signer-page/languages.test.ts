import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Notification } from '../../src/modules/notifications/notification.entity';
import { LANGUAGES, LANGUAGE_INFO, type Language } from '../../src/platform/i18n';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { DESKTOP, PHONE, axeViolations, hasChromium, useBrowser, watchPage } from '../helpers/browser';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { sampleFaceJpeg } from '../helpers/faces';
import { restUpload, signerApi } from '../helpers/clients';

/**
 * The signing page in each of its nine languages, at a phone's width (390 px) and a desktop's (1280 px), in Chromium:
 * every step a signer meets (the email code, the signature's consent, the finished screen; an Aadhaar signer's consent
 * and the decline form) is walked by keyboard alone and, on each, axe-core finds no violation (WCAG 2.2 A and AA and
 * best practices), `lang` names the language, no text runs out of its box or off the screen (measured from the text's
 * own layout boxes), the script's text is drawn with the web font the service serves for it (asked of Chromium's
 * renderer: no device font, no missing glyph box), and no English sentence is left untranslated. A screenshot of each
 * screen is written under the temporary directory (its path is printed) for a person to look at.
 */
const SHOTS = path.join(tmpdir(), 'signer-page-languages');

/** Words the page may show in Latin letters in any language: the session's own data and the brand. */
const DATA_WORDS = [
  'Asha Rao',
  'Ravi Kumar',
  'lease deed.pdf',
  'Esign and E-Stamp',
  'Priya Menon',
  'Amount in words',
  'Start date',
  'I agree to the terms',
  'Repayment',
  'Monthly',
  'Quarterly',
];

/** A signer's fields of the common kinds (labels are the sender's data, in English here), on page 1. */
const FIELDS = [
  { type: 'signature', page: 0, x: 72, y: 700, alignment: 'left' },
  { type: 'text', page: 0, x: 72, y: 70, alignment: 'left', label: 'Amount in words', max_length: 80 },
  { type: 'date', page: 0, x: 72, y: 120, alignment: 'left', label: 'Start date', format: 'DD MMM YYYY' },
  { type: 'checkbox', page: 0, x: 72, y: 170, alignment: 'left', label: 'I agree to the terms', required: true },
  { type: 'radio', page: 0, x: 72, y: 220, alignment: 'left', label: 'Repayment', options: ['Monthly', 'Quarterly'] },
];

interface ScreenReport {
  overflow: string[];
  untranslated: string[];
  lang: string;
}

/** Measures every visible text's layout boxes against the viewport and the box of the element holding it. */
function readScreen(page: Page, dataWords: string[]): Promise<ScreenReport> {
  return page.evaluate((data) => {
    const width = document.documentElement.clientWidth;
    const overflow: string[] = [];
    const untranslated: string[] = [];
    if (document.documentElement.scrollWidth > width + 1) {
      // Name the elements that reach past the edge (those whose children do not), to say what to fix.
      const wide = [...document.body.querySelectorAll('*')].filter(
        (element) =>
          element.getBoundingClientRect().right > width + 1 &&
          ![...element.children].some((child) => child.getBoundingClientRect().right > width + 1),
      );
      const names = wide.slice(0, 5).map((element) => `${element.tagName.toLowerCase()}.${element.className}`);
      overflow.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px in ${width} px (${names.join(', ')})`);
    }
    const blockOf = (element: Element) => {
      let at: Element | null = element;
      while (at && getComputedStyle(at).display === 'inline') at = at.parentElement;
      return at ?? document.body;
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent!.trim();
      const element = node.parentElement!;
      if (!text || element.closest('.pages, .visually-hidden, [hidden], select, noscript, script, style')) continue;
      const style = getComputedStyle(element);
      if (style.display === 'none' || style.visibility === 'hidden') continue;
      // Shown on focus only (a skip link clipped to a pixel, or moved above the top until focused).
      const own = blockOf(element).getBoundingClientRect();
      if (own.width <= 1 || own.height <= 1 || own.bottom < 0) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const box = own;
      for (const rect of range.getClientRects()) {
        if (rect.width === 0) continue;
        if (rect.right > width + 1 || rect.left < -1) overflow.push(`off the screen: "${text}"`);
        else if (rect.right > box.right + 1 || rect.left < box.left - 1) overflow.push(`out of its box: "${text}"`);
      }
      if (document.documentElement.lang !== 'en' && !element.closest('[lang="en"]')) {
        // Addresses are data too (a masked email, a link).
        let rest = text.replace(/\S+@\S+|https?:\/\/\S+/g, '');
        for (const word of data) rest = rest.replaceAll(word, '');
        if (/[A-Za-z]{3,}[ ,.:]+[A-Za-z]{3,}/.test(rest)) untranslated.push(text);
      }
    }
    if (document.documentElement.lang !== 'en') {
      let title = document.title;
      for (const word of data) title = title.replaceAll(word, '');
      if (/[A-Za-z]{3,}[ ,.:]+[A-Za-z]{3,}/.test(title)) untranslated.push(`title: ${document.title}`);
    }
    return { overflow: [...new Set(overflow)], untranslated, lang: document.documentElement.lang };
  }, dataWords);
}

/**
 * The fonts Chromium drew each text in the script with (DevTools' CSS.getPlatformFontsForNode): each must be the
 * script's web font, which the page loaded from the service.
 */
async function fontsOfScript(page: Page, script: string): Promise<string[]> {
  const marked = await page.evaluate((name) => {
    const pattern = new RegExp(`\\p{Script=${name}}`, 'u');
    let count = 0;
    for (const element of document.body.querySelectorAll('*')) {
      if (element.closest('.pages, [hidden], .visually-hidden')) continue;
      // Not drawn (hidden by CSS at this width): no font drew it.
      const box = element.getBoundingClientRect();
      if (box.width <= 1 || box.height <= 1 || getComputedStyle(element).visibility === 'hidden') continue;
      const own = [...element.childNodes].some((child) => child.nodeType === Node.TEXT_NODE && pattern.test(child.textContent!));
      if (own) {
        element.setAttribute('data-glyph-probe', '');
        count++;
      }
    }
    return count;
  }, script);
  expect(marked, `text in ${script} on the screen`).toBeGreaterThan(0);
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('DOM.enable');
    await cdp.send('CSS.enable');
    const { root } = await cdp.send('DOM.getDocument', { depth: -1 });
    const { nodeIds } = await cdp.send('DOM.querySelectorAll', { nodeId: root.nodeId, selector: '[data-glyph-probe]' });
    const problems: string[] = [];
    for (const nodeId of nodeIds) {
      const { fonts } = await cdp.send('CSS.getPlatformFontsForNode', { nodeId });
      // Nothing drawn now (the page hid it since it was marked, as the document's status line once drawn): no font to judge.
      if (fonts.length === 0) continue;
      const web = fonts.filter((font) => font.isCustomFont && font.postScriptName.startsWith(`NotoSans${script}`));
      if (web.length === 0) {
        const { outerHTML } = await cdp.send('DOM.getOuterHTML', { nodeId });
        problems.push(`${outerHTML.slice(0, 120)} drawn with ${fonts.map((font) => font.familyName).join(', ')}`);
      }
    }
    return problems;
  } finally {
    await page.evaluate(() =>
      document.querySelectorAll('[data-glyph-probe]').forEach((el) => el.removeAttribute('data-glyph-probe')),
    );
    await cdp.detach();
  }
}

describe.skipIf(!hasChromium)('the signing page in every language', () => {
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;
  let faceRef: string;
  const browser = useBrowser();

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token, undefined, 'lease deed.pdf');
    faceRef = (
      await restUpload<any>(app, '/files/upload-asset', owner.token, { bytes: sampleFaceJpeg(6, 2), filename: 'ref.jpg' })
    ).body.data.client_id;
    mkdirSync(SHOTS, { recursive: true });
    console.info(`signing page screenshots per language: ${SHOTS}`);
  });
  afterAll(async () => app.close());

  async function open(url: string, options: BrowserContextOptions) {
    const context = await browser().newContext({ ...options, reducedMotion: 'reduce' });
    const page = await context.newPage();
    const watched = watchPage(page);
    const fonts: string[] = [];
    page.on('request', (request) => {
      const { pathname } = new URL(request.url());
      if (pathname.startsWith('/signer-assets/fonts/')) fonts.push(path.basename(pathname));
    });
    await page.goto(url);
    return { page, errors: watched.errors, fonts, close: () => context.close() };
  }

  /** Presses Tab until the focused element matches `selector`, as a keyboard user would. */
  async function tabTo(page: Page, selector: string, limit = 40) {
    for (let i = 0; i < limit; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate((wanted) => document.activeElement?.matches(wanted) ?? false, selector)) return;
    }
    throw new Error(`Tab never reached ${selector}`);
  }

  async function sentCode(signerId: string): Promise<string> {
    let code: string | undefined;
    await expect
      .poll(async () => {
        const [message] = await app.services.orm.em
          .fork()
          .find(Notification, { signer: signerId, kind: 'email_otp' }, { orderBy: { createdAt: 'desc' }, limit: 1 });
        code = /\b(\d{6})\b/.exec(message?.textBody ?? '')?.[1];
        return code;
      })
      .toBeTruthy();
    return code!;
  }

  /** Everything a screen must be, in `language`: checked, and photographed. */
  async function checkScreen(page: Page, language: Language, name: string) {
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: path.join(SHOTS, `${language}-${name}.png`), fullPage: true });
    const report = await readScreen(page, DATA_WORDS);
    expect(report.lang, name).toBe(language);
    expect(report.overflow, `${language} ${name}: text out of its box`).toEqual([]);
    expect(report.untranslated, `${language} ${name}: English left on the page`).toEqual([]);
    if (language !== 'en') expect(await fontsOfScript(page, LANGUAGE_INFO[language].script), `${language} ${name}`).toEqual([]);
    const violations = (await axeViolations(page)).map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${JSON.stringify(violation.nodes.map((n) => n.target))}`,
    );
    expect(violations, `${language} ${name}: axe`).toEqual([]);
  }

  const sizes: [string, BrowserContextOptions][] = [
    ['390', PHONE],
    ['1280', DESKTOP],
  ];

  describe.each(LANGUAGES)('%s', (language) => {
    it.each(sizes)(
      'at %s px: a code, the consent, the signature, the finished screen; Aadhaar’s consent, the decline form, the wait for the ESP',
      async (width, size) => {
        const session = await createSession(
          app,
          owner.token,
          sessionBody(fileId, {
            sender: 'Priya Menon',
            signing_order: 'parallel',
            signers: [
              signerInput({ full_name: 'Asha Rao', email: 'asha@example.com', verify_email: true, language }),
              signerInput({ full_name: 'Ravi Kumar', sign_type: 'aadhaar', language }),
            ],
          }),
        );
        const [asha, ravi] = session.signers;

        const first = await open(asha.invite_url as string, size);
        try {
          const { page } = first;
          await page.locator('[data-step="email"]').waitFor({ timeout: 30_000, state: 'attached' });
          await checkScreen(page, language, `${width}-code`);
          await tabTo(page, '[data-step="email"] button:not([hidden])');
          await page.keyboard.press('Enter');
          await page.locator('[data-step="email"] input:visible').waitFor();
          await tabTo(page, '[data-step="email"] input');
          await page.keyboard.type(await sentCode(asha.signer_id as string));
          await page.keyboard.press('Enter');

          await page.locator('[data-step="sign"]').waitFor({ timeout: 30_000 });
          await checkScreen(page, language, `${width}-sign`);
          await tabTo(page, '[data-step="sign"] input[type="checkbox"]');
          await page.keyboard.press('Space');
          await tabTo(page, '[data-step="sign"] button[type="submit"]');
          await page.keyboard.press('Enter');
          await page.locator('[data-screen="done"]').waitFor({ timeout: 60_000 });
          await checkScreen(page, language, `${width}-done`);
          expect(first.errors).toEqual([]);
          // Each script's font is fetched only when the page shows it: the signer's own script, nothing else.
          const script = LANGUAGE_INFO[language].script;
          expect(new Set(first.fonts.map((file) => file.replace(/-(Regular|Bold)\.ttf$/, ''))), 'fonts fetched').toEqual(
            new Set(language === 'en' ? [] : [`NotoSans${script}`]),
          );
        } finally {
          await first.close();
        }

        const second = await open(ravi.invite_url as string, size);
        try {
          const { page } = second;
          await page.locator('[data-step="sign"]').waitFor({ timeout: 30_000 });
          await checkScreen(page, language, `${width}-aadhaar`);
          await tabTo(page, '[data-section="decline"] button[aria-expanded]');
          await page.keyboard.press('Enter');
          await page.locator('[data-section="decline"] form:visible').waitFor();
          await checkScreen(page, language, `${width}-decline`);
          expect(second.errors).toEqual([]);
        } finally {
          await second.close();
        }
        // Gone to the ESP (the request sent, the signer not back yet): the waiting step, with its ways to start again.
        expect((await signerApi(app, 'POST', '/esp/start', ravi.token as string, { consent: true })).status).toBe(200);
        const third = await open(ravi.invite_url as string, size);
        try {
          await third.page.locator('[data-step="sign"][data-esp="pending"]').waitFor({ timeout: 30_000, state: 'attached' });
          await checkScreen(third.page, language, `${width}-aadhaar-waiting`);
        } finally {
          await third.close();
        }
        const read = await rest<any>(app, 'GET', '/esign/details', {
          token: owner.token,
          query: { client_id: session.client_id },
        });
        expect(read.body.data.signers.map((signer: any) => signer.status)).toEqual(['completed', 'pending']);
      },
    );
  });

  describe.each(LANGUAGES)('%s, the other steps', (language) => {
    it.each(sizes)(
      'at %s px: location, fields, the face check, a DSC with no bridge, not one’s turn, a cancelled request',
      async (width, size) => {
        const create = (body: Record<string, unknown>) => createSession(app, owner.token, sessionBody(fileId, body));
        const checked = await create({
          signers: [signerInput({ full_name: 'Asha Rao', verify_location: true, language, elements: FIELDS })],
        });
        const face = await create({ signers: [signerInput({ full_name: 'Asha Rao', face_ref_file_id: faceRef, language })] });
        const dsc = await create({ sign_type: 'dsc', signers: [signerInput({ full_name: 'Asha Rao', language })] });
        const turns = await create({
          signing_order: 'sequential',
          signers: [signerInput({ full_name: 'Asha Rao', language }), signerInput({ full_name: 'Ravi Kumar', language })],
        });
        const cancelled = await create({ signers: [signerInput({ full_name: 'Asha Rao', language })] });
        expect(
          (await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: cancelled.client_id } })).status,
        ).toBe(200);

        const screens: [string, string, string][] = [
          [checked.signers[0]!.invite_url as string, '[data-step="location"]', 'location'],
          [face.signers[0]!.invite_url as string, '[data-step="face"]', 'face'],
          [dsc.signers[0]!.invite_url as string, '[data-step="sign"][data-dsc="no-bridge"]', 'dsc-no-bridge'],
          [turns.signers[1]!.invite_url as string, '[data-step="waiting"]', 'waiting'],
          [cancelled.signers[0]!.invite_url as string, '[data-screen="cancelled"]', 'cancelled'],
        ];
        for (const [url, selector, name] of screens) {
          const opened = await open(url, size);
          try {
            await opened.page.locator(selector).waitFor({ timeout: 30_000, state: 'attached' });
            await checkScreen(opened.page, language, `${width}-${name}`);
          } finally {
            await opened.close();
          }
        }
        // Past the location check (as the browser would send it), the fields: each kind, labelled, keyboard-reachable.
        const token = checked.signers[0]!.token as string;
        expect(
          (await signerApi(app, 'POST', '/location', token, { latitude: 19.07, longitude: 72.87, accuracy: 20 })).status,
        ).toBe(200);
        const fields = await open(checked.signers[0]!.invite_url as string, size);
        try {
          await fields.page.locator('[data-step="fields"]').waitFor({ timeout: 30_000, state: 'attached' });
          await checkScreen(fields.page, language, `${width}-fields`);
          await tabTo(fields.page, '[data-step="fields"] input[type="checkbox"]');
          await fields.page.keyboard.press('Space');
          expect(await fields.page.locator('[data-step="fields"] input[type="checkbox"]').isChecked()).toBe(true);
        } finally {
          await fields.close();
        }
      },
    );
  });

  it('takes the browser’s language when the sender set none, switches by keyboard, and keeps the choice', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { signers: [signerInput({ full_name: 'Asha Rao' })] }),
    );
    const signer = session.signers[0];
    const first = await open(signer.invite_url as string, { ...PHONE, locale: 'hi-IN' });
    try {
      const { page } = first;
      await page.locator('[data-step="sign"]').waitFor({ timeout: 30_000 });
      expect(await page.evaluate(() => document.documentElement.lang)).toBe('hi');
      expect(await page.locator('[data-step="sign"] h2').textContent()).toMatch(/\p{Script=Devanagari}/u);
      // The switch names each language in itself, marked with its language for screen readers; closed, it draws
      // none of them (no script's font is fetched for it).
      expect(await page.locator('#language-list').isHidden()).toBe(true);
      await tabTo(page, '#language-toggle');
      expect(await page.locator('#language-toggle').getAttribute('aria-expanded')).toBe('false');
      await page.keyboard.press('Enter');
      expect(await page.locator('#language-toggle').getAttribute('aria-expanded')).toBe('true');
      const choices = await page
        .locator('#language-list button')
        .evaluateAll((all) => all.map((choice) => [choice.getAttribute('lang'), choice.textContent]));
      expect(choices).toEqual(LANGUAGES.map((tag) => [tag, LANGUAGE_INFO[tag].native]));
      // Focus is on the language spoken now; Escape closes the list and goes back to the button.
      expect(await page.evaluate(() => document.activeElement?.getAttribute('lang'))).toBe('hi');
      await page.keyboard.press('Escape');
      expect(await page.locator('#language-list').isHidden()).toBe(true);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('language-toggle');
      // Open again and choose Malayalam, the last, by Tab.
      await page.keyboard.press('Enter');
      await tabTo(page, '#language-list button[lang="ml"]');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.documentElement.lang === 'ml');
      await page
        .locator('[data-step="sign"] h2')
        .filter({ hasText: /\p{Script=Malayalam}/u })
        .waitFor();
      await expect.poll(() => page.locator('#status').textContent()).toMatch(/\p{Script=Malayalam}/u);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('language-toggle');
      const read = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } });
      expect(read.body.data.signers[0].language).toBe('ml');
      expect(first.errors).toEqual([]);
    } finally {
      await first.close();
    }
    // Another visit, another browser in English: the signer's choice wins.
    const again = await open(signer.invite_url as string, { ...DESKTOP, locale: 'en-IN' });
    try {
      await again.page.locator('[data-step="sign"]').waitFor({ timeout: 30_000 });
      expect(await again.page.evaluate(() => document.documentElement.lang)).toBe('ml');
      expect(await again.page.locator('#language-toggle [lang="ml"]').textContent()).toBe('മലയാളം');
    } finally {
      await again.close();
    }
  });
});
