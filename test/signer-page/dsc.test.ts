/**
 * Signing with a DSC token on the signing page, in Chromium: the page finds the DSC bridge (bridge/src, run as a signer
 * runs it) on this computer, lists the certificates of a SoftHSM2 token standing in for the USB token, has the service
 * check the chosen one (/signer-api/dsc/start), and the signer approves each signature on the bridge's own page, typing
 * the PIN there; the page then completes the signature (/signer-api/dsc/complete). The certificates come from the
 * sandbox's DSC CA, which the service trusts for DSC in sandbox.
 */
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appPort, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { startBridge, type BridgeProcess } from '../helpers/bridge';
import { CHROMIUM_PATH, DESKTOP, PHONE, hasChromium, seriousAxeViolations, useBrowser, watchPage } from '../helpers/browser';
import { rest, signerApi } from '../helpers/clients';
import { createSession, initializeEsign, sessionBody, signatureAt, signerInput, uploadPdf } from '../helpers/factories';
import { hasPdfsig, pdfsigReport, signaturesOf } from '../helpers/pdf-signatures';
import { createSoftToken, hasSoftHsm, SOFTHSM_MODULE, type SoftToken } from '../helpers/softhsm';

const SIGNER = 'Asha Verma';
const OTHER_HOLDER = 'Ravi Iyer';
const TOKEN_LABEL = 'ePass2003';

if (!hasChromium) console.warn(`${CHROMIUM_PATH} is missing: the DSC signing page tests are skipped`);
if (!hasSoftHsm)
  console.warn(
    `SoftHSM2 is missing (softhsm2-util, pkcs11-tool, openssl or ${SOFTHSM_MODULE}): the DSC signing page tests with a bridge are skipped (apt-get install softhsm2 opensc openssl)`,
  );
if (!hasPdfsig) console.warn('pdfsig is missing (apt-get install poppler-utils): the signed PDF is not checked with poppler');

/** A CA certificate on the token, without a key, as DSC tokens carry their chain (createSoftToken adds key pairs only). */
async function addChainCertificate(token: SoftToken, pem: string, id: string, label: string): Promise<void> {
  const file = path.join(path.dirname(token.conf), `chain-${id}.der`);
  await writeFile(file, new X509Certificate(pem).raw);
  try {
    await new Promise<void>((resolve, reject) => {
      const args = ['--module', SOFTHSM_MODULE, '--token-label', token.label, '--login', '--pin', token.pin];
      const child = spawn('pkcs11-tool', [...args, '--write-object', file, '--type', 'cert', '--id', id, '--label', label], {
        env: { ...process.env, ...token.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.on('error', reject);
      child.on('close', (status) =>
        status === 0 ? resolve() : reject(new Error(`pkcs11-tool exited with ${status}: ${output}`)),
      );
    });
  } finally {
    await rm(file, { force: true });
  }
}

interface SandboxDsc {
  private_key: string;
  certificate: string;
  chain: string[];
  serial: string;
}

/** What the page says, without the connection refusals the test provokes on purpose (no bridge at the port). */
const unexpected = (errors: string[]) => errors.filter((error) => !error.includes('net::ERR_CONNECTION_REFUSED'));

// Chromium, the bridge and a signature's time-stamp and LTV on a 2-core machine shared with other test files: room.
describe.skipIf(!hasChromium)('signing with a DSC token on the signing page', { timeout: 120_000 }, () => {
  const browser = useBrowser();
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;
  /**
   * Where the app looks for the bridge: nothing listens there until a test starts a bridge on it. Chosen before the
   * app starts (it reads DSC_BRIDGE_URL once), while the bridge's --origin is the app's origin: port, app, bridge.
   */
  let bridgePort: number;
  const bridgeOn = (env: Record<string, string>) =>
    startBridge({ modules: [SOFTHSM_MODULE], origins: [app.url], env, port: bridgePort });

  beforeAll(async () => {
    bridgePort = await appPort();
    app = await startTestApp({ env: { DSC_BRIDGE_URL: `http://127.0.0.1:${bridgePort}` } });
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app?.close());

  const dscSession = (overrides: Record<string, unknown> = {}) =>
    createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        sign_type: 'dsc',
        allow_download: true,
        signers: [signerInput({ full_name: SIGNER })],
        ...overrides,
      }),
    );

  async function open(url: string, options: BrowserContextOptions = DESKTOP) {
    const context = await browser().newContext({ ...options, reducedMotion: 'reduce' });
    const page = await context.newPage();
    const watched = watchPage(page);
    const response = await page.goto(url);
    return {
      context,
      page,
      errors: watched.errors,
      csp: response?.headers()['content-security-policy'] ?? '',
      close: () => context.close(),
    };
  }

  /** Cleanups run after the current test, last first, even when it failed or timed out (its body may still run). */
  let cleanups: (() => Promise<void>)[] = [];
  const afterThisTest = (cleanup: () => Promise<void>) => void cleanups.unshift(cleanup);
  afterEach(async () => {
    const due = cleanups;
    cleanups = [];
    for (const cleanup of due) await cleanup().catch(() => undefined);
  });

  const dscState = (page: Page) => page.locator('[data-step="sign"]').getAttribute('data-dsc');
  const focusedText = (page: Page) => page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
  /** Presses Tab until the focused element matches, as a keyboard user does; its tag, type and accessible text. */
  async function tabTo(page: Page, matches: (focused: { tag: string; type: string; text: string }) => boolean, limit = 20) {
    for (let i = 0; i < limit; i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        const label = el && 'labels' in el ? (el as HTMLInputElement).labels?.[0]?.textContent : null;
        return {
          tag: el?.tagName.toLowerCase() ?? '',
          type: el?.getAttribute('type') ?? '',
          text: (label ?? el?.textContent ?? '').trim(),
        };
      });
      if (matches(focused)) return focused;
    }
    throw new Error('Tab never reached the control');
  }
  const attemptsLeft = async (token: string) =>
    (await signerApi(app, 'GET', '/session', token)).body.data.signer.attempts_left as number;

  it('(a) with no bridge running, says so plainly with the download and help links and Try again, at phone and desktop sizes', async () => {
    const session = await dscSession();
    const helpPage = await fetch(`${app.url}/dsc-bridge`);
    expect(helpPage.status).toBe(200);
    for (const size of [PHONE, DESKTOP]) {
      const { page, errors, csp, close } = await open(session.signers[0].invite_url as string, size);
      try {
        expect(csp).toContain(`connect-src 'self' http://127.0.0.1:${bridgePort};`);
        await expect.poll(() => dscState(page), { timeout: 15_000 }).toBe('no-bridge');
        const step = page.locator('[data-step="sign"]');
        await expect
          .poll(() => step.getByRole('heading', { level: 2 }).innerText())
          .toBe('The DSC bridge is not running on this computer');
        expect(await step.innerText()).toContain('The DSC bridge is not running on this computer');
        expect(await page.locator('.facts').innerText()).toContain('Your Digital Signature Certificate (DSC token)');
        const download = step.getByRole('link', { name: 'Download the DSC bridge' });
        expect(await download.getAttribute('href')).toBe(`${app.url}/dsc-bridge/esign-dsc-bridge.zip`);
        const help = step.getByRole('link', { name: /How to install and start the DSC bridge/ });
        expect(await help.getAttribute('href')).toBe(`${app.url}/dsc-bridge`);
        expect(await help.getAttribute('target')).toBe('_blank');
        expect(await help.getAttribute('rel')).toBe('noopener');
        expect(await step.innerText()).toContain('Start it, with your token plugged in.');
        const again = step.getByRole('button', { name: 'Try again' });
        expect(await again.isVisible()).toBe(true);
        expect(await seriousAxeViolations(page), JSON.stringify(size.viewport)).toEqual([]);

        // Try again from the keyboard: the page looks again, says the same, and focus is on the step's heading.
        await again.focus();
        await page.keyboard.press('Enter');
        await expect.poll(() => dscState(page)).toBe('no-bridge');
        expect(await focusedText(page)).toBe('The DSC bridge is not running on this computer');
        expect(unexpected(errors)).toEqual([]);
      } finally {
        await close();
      }
    }
  });

  describe.skipIf(!hasSoftHsm)('with the bridge and a SoftHSM2 token', () => {
    it('(b) a bridge whose token holds no certificate: "No token found", with Try again', async () => {
      const empty = await createSoftToken({ label: 'Empty DSC', objects: [] });
      // Stopped after the test even when it times out: the next bridge needs the port.
      afterThisTest(async () => empty.cleanup());
      const bridge = await bridgeOn(empty.env);
      afterThisTest(async () => bridge.stop());
      const session = await dscSession();
      const { page, errors, close } = await open(session.signers[0].invite_url as string);
      afterThisTest(close);
      await expect.poll(() => dscState(page), { timeout: 20_000 }).toBe('no-token');
      const step = page.locator('[data-step="sign"]');
      expect(await step.getByRole('heading', { level: 2 }).innerText()).toBe('No token found');
      const text = await step.innerText();
      expect(text).toContain('No token found: plug in your DSC token (and check its driver is installed).');
      expect(text).toContain('The bridge sees “Empty DSC”, but no certificate on it.');
      expect(await step.getByRole('button', { name: 'Try again' }).isVisible()).toBe(true);
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    });

    describe('a token with the signer’s certificate', () => {
      let token: SoftToken;
      let bridge: BridgeProcess;
      let issued: SandboxDsc;

      const issue = async (body: Record<string, unknown>): Promise<SandboxDsc> => {
        const response = await fetch(`${app.url}/sandbox/dsc/certificates`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const envelope = (await response.json()) as { data: SandboxDsc; success: boolean };
        expect(response.status, JSON.stringify(envelope)).toBe(200);
        expect(envelope.success).toBe(true);
        return envelope.data;
      };

      beforeAll(async () => {
        issued = await issue({ common_name: SIGNER, organisation: 'Verma Traders' });
        // Someone else's certificate on the same token: listed too, and refused by the service (the name).
        const other = await issue({ common_name: OTHER_HOLDER });
        token = await createSoftToken({
          label: TOKEN_LABEL,
          pin: '246810',
          objects: [
            { id: '01', label: SIGNER, privateKeyPem: issued.private_key, certificatePem: issued.certificate },
            { id: '02', label: OTHER_HOLDER, privateKeyPem: other.private_key, certificatePem: other.certificate },
          ],
        });
        // The chain the sandbox answered (its DSC CA, then the root): carried by the token, not offered as a choice.
        for (const [index, pem] of issued.chain.entries()) await addChainCertificate(token, pem, `c${index}`, `CA ${index}`);
        bridge = await bridgeOn(token.env);
      });
      afterAll(async () => {
        await bridge?.stop();
        await token?.cleanup();
      });

      /** On the signing page: the certificate of `holder` chosen, consent, Sign; up to the bridge's link. */
      async function signOnPage(page: Page, holder = SIGNER) {
        await expect.poll(() => dscState(page), { timeout: 20_000 }).toBe('choose');
        await page.getByRole('radio', { name: new RegExp(`^${holder}`) }).check();
        await page.getByLabel(/I agree to sign it with this Digital Signature Certificate/).check();
        await page.getByRole('button', { name: 'Sign', exact: true }).click();
      }

      /** The bridge's link clicked (a new tab: the bridge's approval page), as the signer does. */
      async function openBridgeWindow(context: BrowserContext, page: Page): Promise<Page> {
        await expect.poll(() => dscState(page), { timeout: 20_000 }).toBe('approve');
        const link = page.getByRole('link', { name: /Open the DSC bridge to enter your PIN/ });
        expect(await link.getAttribute('target')).toBe('_blank');
        expect(await link.getAttribute('rel')).toBe('noopener');
        const opened = context.waitForEvent('page');
        await link.click();
        const approval = await opened;
        await approval.waitForLoadState();
        expect(new URL(approval.url()).origin).toBe(bridge.url);
        return approval;
      }

      it('(c) the whole journey: certificate chosen, PIN typed in the bridge window, signed; the PDF passes pdfsig', async () => {
        const session = await dscSession();
        const invite = session.signers[0].invite_url as string;
        const { context, page, errors, close } = await open(invite);
        try {
          await expect.poll(() => dscState(page), { timeout: 20_000 }).toBe('choose');
          // The signer's two certificates, not the CAs' the token carries.
          const radios = page.getByRole('radio');
          expect(await radios.count()).toBe(2);
          const mine = page.locator('.dsc-certificate', { hasText: SIGNER });
          const shown = await mine.innerText();
          expect(shown).toContain(`Issued by ${new X509Certificate(issued.chain[0]!).subject.match(/CN=(.*)/)![1]}`);
          expect(shown).toMatch(/Valid until \d{1,2} \w{3} \d{4}, .* IST/);
          expect(shown).toContain(`Token: ${TOKEN_LABEL}`);
          expect(await seriousAxeViolations(page)).toEqual([]);

          // Sign without a certificate chosen or without consent: refused in place.
          await page.getByRole('button', { name: 'Sign', exact: true }).click();
          expect(await page.locator('#dsc-certificate-error').innerText()).toBe('Choose the certificate to sign with.');
          expect(await page.getByRole('radio', { name: new RegExp(`^${SIGNER}`) }).getAttribute('aria-invalid')).toBe('true');
          await page.getByRole('radio', { name: new RegExp(`^${SIGNER}`) }).check();
          await page.getByRole('button', { name: 'Sign', exact: true }).click();
          await expect.poll(() => page.getByLabel(/I agree to sign it/).getAttribute('aria-invalid')).toBe('true');
          expect(await dscState(page)).toBe('choose');

          await signOnPage(page);
          const approval = await openBridgeWindow(context, page);
          expect(await page.locator('.dsc-instruction').innerText()).toBe('Enter your token PIN in the bridge window.');
          expect(await seriousAxeViolations(page)).toEqual([]);
          // The bridge's page says what is signed: the service's description of this document.
          expect(await approval.textContent('.description')).toContain('contract.pdf');
          await approval.fill('#pin', token.pin);
          await approval.click('button[value=sign]');
          await approval.locator('h1', { hasText: 'Signed' }).waitFor();

          await page.locator('[data-screen="done"]').waitFor({ timeout: 60_000 });
          expect(await page.locator('#message-title').innerText()).toBe('You have signed “contract.pdf”');
          expect(await seriousAxeViolations(page)).toEqual([]);
          expect(errors).toEqual([]);
        } finally {
          await close();
        }

        const details = (
          await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } })
        ).body.data;
        expect(details.status).toBe('completed');
        expect(details.signers[0].status).toBe('completed');
        const link = await rest<any>(app, 'GET', '/esign/download-pdf', {
          token: owner.token,
          query: { client_id: session.client_id },
        });
        expect(link.status, JSON.stringify(link.body)).toBe(200);
        const pdf = Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
        const signatures = await signaturesOf(pdf);
        expect(signatures).toHaveLength(1);
        expect(signatures[0]!.verification.digestValid && signatures[0]!.verification.signatureValid).toBe(true);
        if (hasPdfsig) {
          const report = pdfsigReport(pdf);
          const made = report.filter((entry) => entry.kind === 'signature');
          expect(made.length).toBe(1);
          expect(made.map((entry) => entry.valid)).toEqual([true]);
          // A document time-stamp (B-LTA) is listed too; poppler 22.12 does not validate those ("not yet verified").
          expect(report.filter((entry) => entry.kind === 'signature' && !entry.valid)).toEqual([]);
        }
      });

      it('(d) a wrong PIN in the bridge window first (the bridge says so), then the right one; no attempt is used', async () => {
        const session = await dscSession();
        const signerToken = session.signers[0].token;
        const before = await attemptsLeft(signerToken);
        const { context, page, errors, close } = await open(session.signers[0].invite_url as string);
        try {
          await signOnPage(page);
          const approval = await openBridgeWindow(context, page);
          await approval.fill('#pin', '000000');
          await approval.click('button[value=sign]');
          await approval.locator('p.alert').waitFor();
          expect(await approval.textContent('p.alert')).toContain('Wrong PIN');
          // The signing page still waits for the approval, and nothing was counted.
          expect(await dscState(page)).toBe('approve');
          expect(await attemptsLeft(signerToken)).toBe(before);

          await approval.fill('#pin', token.pin);
          await approval.click('button[value=sign]');
          await approval.locator('h1', { hasText: 'Signed' }).waitFor();
          await page.locator('[data-screen="done"]').waitFor({ timeout: 60_000 });
          expect(errors).toEqual([]);
        } finally {
          await close();
        }
        expect(await attemptsLeft(signerToken)).toBe(before);
        const details = (
          await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } })
        ).body.data;
        expect(details.status).toBe('completed');
      });

      it('(e) Cancel in the bridge window: the page says it was cancelled and offers Try again, which lists the certificates again', async () => {
        const session = await dscSession();
        const signerToken = session.signers[0].token;
        const before = await attemptsLeft(signerToken);
        const { context, page, errors, close } = await open(session.signers[0].invite_url as string, PHONE);
        try {
          await signOnPage(page);
          const approval = await openBridgeWindow(context, page);
          await approval.click('button[value=cancel]');
          await approval.locator('h1', { hasText: 'Not signed' }).waitFor();

          await expect.poll(() => dscState(page), { timeout: 30_000 }).toBe('refused');
          const step = page.locator('[data-step="sign"]');
          expect(await step.getByRole('heading', { level: 2 }).innerText()).toBe('You cancelled in the DSC bridge');
          expect(await step.locator('.dsc-outcome').getAttribute('data-bridge-code')).toBe('cancelled');
          expect(await step.innerText()).toContain('nothing was signed');
          expect(await focusedText(page)).toBe('You cancelled in the DSC bridge');
          expect(await seriousAxeViolations(page)).toEqual([]);
          expect(await attemptsLeft(signerToken)).toBe(before);

          await step.getByRole('button', { name: 'Try again' }).click();
          await expect.poll(() => dscState(page), { timeout: 20_000 }).toBe('choose');
          // The certificate chosen before is chosen again.
          expect(await page.getByRole('radio', { name: new RegExp(`^${SIGNER}`) }).isChecked()).toBe(true);
          expect(errors).toEqual([]);
        } finally {
          await close();
        }
        const view = (await signerApi(app, 'GET', '/session', signerToken)).body.data;
        expect(view.signer.status).not.toBe('completed');
        expect(view.signer.attempts_left).toBe(before);
      });

      it('an envelope of two documents, by keyboard only: two approvals in the bridge, then signed', async () => {
        const second = await uploadPdf(app, owner.token, undefined, 'annexure.pdf');
        const created = await initializeEsign(app, owner.token, {
          sign_type: 'dsc',
          documents: [
            { file_id: fileId, name: 'Sale deed' },
            { file_id: second, name: 'Annexure' },
          ],
          signers: [signerInput({ full_name: SIGNER, elements: [0, 1].map((document) => ({ ...signatureAt(0), document })) })],
        });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        const session = created.body.data!;
        const { context, page, errors, close } = await open(session.signers[0].invite_url as string);
        try {
          await expect.poll(() => dscState(page), { timeout: 20_000 }).toBe('choose');
          // Where the page's "Go to the signing steps" (and the phone's action bar) land: the step's heading.
          await page.locator('#step-heading').focus();
          // Tab reaches the group (its first radio, in the order the token lists them), Space chooses, the arrows move.
          const first = await tabTo(page, (focused) => focused.type === 'radio');
          await page.keyboard.press('Space');
          if (!first.text.startsWith(SIGNER)) await page.keyboard.press('ArrowDown');
          expect(await page.getByRole('radio', { name: new RegExp(`^${SIGNER}`) }).isChecked()).toBe(true);
          await tabTo(
            page,
            (focused) => focused.type === 'checkbox' && /sign them with this Digital Signature Certificate/.test(focused.text),
          );
          await page.keyboard.press('Space');
          await tabTo(page, (focused) => focused.tag === 'button' && focused.text === 'Sign');
          await page.keyboard.press('Enter');

          for (const [index, name] of ['Sale deed', 'Annexure'].entries()) {
            await expect
              .poll(() => page.locator('#step-heading').innerText(), { timeout: 20_000 })
              .toBe(`Approve document ${index + 1} of 2 in the DSC bridge`);
            expect(await page.locator('[data-step="sign"]').innerText()).toContain(`document ${index + 1} of 2, “${name}”`);
            // The first time focus is on the heading, the second on the new link: one Tab, or none, reaches it.
            const onLink = () => page.evaluate(() => document.activeElement?.classList.contains('dsc-approve-link') ?? false);
            if (!(await onLink()))
              await tabTo(page, (focused) => focused.tag === 'a' && /Open the DSC bridge/.test(focused.text));
            const opened = context.waitForEvent('page');
            await page.keyboard.press('Enter');
            const approval = await opened;
            await approval.waitForLoadState();
            expect(await approval.textContent('.description')).toContain(`“${name}” (document ${index + 1} of 2)`);
            expect(await approval.evaluate(() => document.activeElement?.id)).toBe('pin');
            await approval.keyboard.type(token.pin);
            await approval.keyboard.press('Enter');
            await approval.locator('h1', { hasText: 'Signed' }).waitFor();
            await approval.close();
            await page.bringToFront();
          }
          await page.locator('[data-screen="done"]').waitFor({ timeout: 60_000 });
          expect(errors).toEqual([]);
        } finally {
          await close();
        }
        const details = (
          await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } })
        ).body.data;
        expect(details.status).toBe('completed');
      });

      it('a certificate of someone else: the service’s refusal is shown with the attempts left', async () => {
        const session = await dscSession();
        const signerToken = session.signers[0].token;
        const before = await attemptsLeft(signerToken);
        const { page, errors, close } = await open(session.signers[0].invite_url as string);
        try {
          await signOnPage(page, OTHER_HOLDER);
          const error = page.locator('[data-dsc="choose"] .action-error:not([hidden])');
          await error.waitFor({ timeout: 30_000 });
          const text = await error.innerText();
          expect(text).toContain('The name on this certificate does not match the name you were asked to sign as.');
          expect(text).toContain(before - 1 === 1 ? 'You have 1 attempt left.' : `You have ${before - 1} attempts left.`);
          expect(await attemptsLeft(signerToken)).toBe(before - 1);
          expect(await seriousAxeViolations(page)).toEqual([]);
          // The refusal is a 422 the page asked for: its failed load is the only error.
          expect(errors.filter((entry) => !entry.includes('422'))).toEqual([]);
        } finally {
          await close();
        }
      });
    });
  });
});
