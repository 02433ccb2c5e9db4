import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

/** Debian's Chromium; playwright-core drives it (no browser download). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM_PATH);

if (!hasChromium) {
  console.warn(`${CHROMIUM_PATH} is missing: the browser tests are skipped (apt-get install chromium, or set CHROMIUM_PATH)`);
}

export const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 900 } };
export const PHONE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 3,
  isMobile: true,
  hasTouch: true,
};

/** One Chromium for the whole test file: launched before its tests, closed after them. */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (!hasChromium) return;
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--no-first-run',
        '--no-default-browser-check',
        // A synthetic camera (a moving test pattern) for getUserMedia, granted without a prompt.
        '--use-fake-device-for-media-stream',
        '--use-fake-ui-for-media-stream',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error('the browser is not running');
    return browser;
  };
}

/**
 * What went wrong inside a page: uncaught errors, console errors (CSP refusals are console errors; a failed
 * load is one too, listed again as `http <status> <path>` to say which).
 */
export function watchPage(page: Page): { errors: string[] } {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()} ${message.location().url}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) errors.push(`http ${response.status()} ${new URL(response.url()).pathname}`);
  });
  return { errors };
}

const AXE_SOURCE = readFileSync(createRequire(__filename).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * Runs axe-core in the page (evaluated over the DevTools protocol, so the page's CSP does not block it)
 * and returns its violations of WCAG 2.x A and AA and best practices.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(`${AXE_SOURCE}\n;void 0`);
  return page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
    });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.map((node) => ({ target: node.target, failureSummary: node.failureSummary })),
    }));
  });
}

/** The serious and critical ones, readable in a failure message. */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  return (await axeViolations(page))
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${JSON.stringify(violation.nodes.map((n) => n.target))}`,
    );
}
