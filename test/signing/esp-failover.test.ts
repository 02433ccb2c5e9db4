import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { createRootCa } from '../../src/modules/signing/certificates';
import { issueAccessToken } from '../../src/modules/users';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { createSession, initializeEsign, sessionBody, signerInput, throughEsp, uploadPdf } from '../helpers/factories';
import { hasPdfsig, pdfsigReport, signaturesOf } from '../helpers/pdf-signatures';
import { DESKTOP, hasChromium, useBrowser, watchPage } from '../helpers/browser';
import { SANDBOX_OTP } from '../../src/modules/sandbox/esp/sandbox-esp';
import { makePkcs12 } from '../helpers/pfx';

/**
 * ESP failover (issue 35): a session's backend names ESPs in order, as a list or a configured group. Real HTTP peers
 * stand in for the ESPs that fail: a port nobody listens on (the connection refused), a gateway answering 503, one
 * that never answers, a 3.2 ESP that is down. The built-in sandbox ESP is the one that answers, and signs.
 */
describe('ESP failover: the next ESP when one does not answer, at no cost to the signer', () => {
  let app: TestApp;
  let db: pg.Client;
  let owner: TestUser;
  let admin: { token: string };
  let file: string;
  let dir: string;
  /** Answers every request with 503, and counts them. */
  let sick: Server;
  let sickHits = 0;
  /** Takes connections and never answers. */
  let silent: Server;
  /** Answers a GET as a 2.1 gateway does (it only takes POSTs): it is up. */
  let alive: Server;

  const listen = async (server: Server) => {
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  /** An address where nothing listens: a server opened and closed again. */
  const closedPort = async () => {
    const probe = createServer();
    const url = await listen(probe);
    await new Promise((resolve) => probe.close(resolve));
    return url;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'esp-failover-'));
    writeFileSync(path.join(dir, 'asp.p12'), makePkcs12({ password: 'asp-secret', commonName: 'Test ASP Pvt Ltd' }));
    const espCertificate = createRootCa('Some ESP response signing', 'Some ESP').certificatePem;
    sick = createServer((_req, res) => {
      sickHits += 1;
      res.writeHead(503).end('maintenance');
    });
    silent = createServer(() => undefined);
    alive = createServer((_req, res) => res.writeHead(405, { allow: 'POST' }).end());
    const esp = (name: string, url: string, extra: Record<string, string> = {}) => ({
      [`ESP_${name}_URL`]: url,
      [`ESP_${name}_CERT`]: espCertificate,
      [`ESP_${name}_ASP_ID`]: 'TEST-ASP',
      [`ESP_${name}_ASP_PFX`]: path.join(dir, 'asp.p12'),
      [`ESP_${name}_ASP_PFX_PASSWORD`]: 'asp-secret',
      [`ESP_${name}_PROBE_TIMEOUT_SECONDS`]: '1',
      ...extra,
    });
    const down = await closedPort();
    app = await startTestApp({
      env: {
        ...esp('DEAD', `${down}/esign/2.1`),
        ...esp('DEADTOO', `${await closedPort()}/esign/2.1`),
        ...esp('SICK', `${await listen(sick)}/esign/2.1`),
        ...esp('SILENT', `${await listen(silent)}/esign/2.1`),
        ...esp('ALIVE', `${await listen(alive)}/esign/2.1`),
        ...esp('DOWN32', `${down}/esign/3.2`, {
          ESP_DOWN32_VERSION: '3.2',
          ESP_DOWN32_AUTH_URL: `${down}/authpage`,
          ESP_DOWN32_ACK_TIMEOUT_SECONDS: '2',
        }),
        ESP_GROUP_INDIA: 'dead, sandbox',
        ESP_FAILURES_BEFORE_SKIP: '2',
        ESP_SKIP_SECONDS: '600',
      },
    });
    db = new pg.Client({ connectionString: app.databaseUrl });
    await db.connect();
    owner = await app.createUser();
    const adminUser = await app.createUser();
    admin = await issueAccessToken(app.services.orm.em.fork(), adminUser.user_id, { scope: 'admin', label: 'ops' });
    file = await uploadPdf(app, owner.token);
  });
  afterAll(async () => {
    await db?.end();
    await app?.close();
    for (const server of [sick, silent, alive]) {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const session = async (backend: string, overrides: Record<string, unknown> = {}) => {
    const created = await createSession(
      app,
      owner.token,
      sessionBody(file, { sign_type: 'aadhaar', backend, signers: [signerInput({ full_name: 'Asha Rao' })], ...overrides }),
    );
    return { clientId: created.client_id, token: created.signers[0]!.token as string };
  };
  const start = (token: string, body: Record<string, unknown> = { consent: true }) =>
    signerApi(app, 'POST', '/esp/start', token, body);
  const audit = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: clientId } })).body.data.events as {
      event: string;
      details: any;
    }[];
  const signerOf = async (token: string) => (await signerApi(app, 'GET', '/session', token)).body.data.signer;
  const health = async () =>
    (await rest<any>(app, 'GET', '/admin/esps', { token: admin.token })).body.data as { backend: string; [key: string]: any }[];
  const sandboxEspUrl = () => `${app.services.config.publicUrl}/sandbox/esp`;

  it('the first ESP refuses connections: the signer is sent to the second, signs there, and loses no attempt', async () => {
    const { clientId, token } = await session('dead,sandbox', { max_retry: 1 });
    const started = await start(token);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.data.backend).toBe('sandbox');
    expect(started.body.data.esp_url).toBe(sandboxEspUrl());
    expect(started.body.data.failover).toEqual([{ backend: 'dead', problem: 'the ESP could not be reached (ECONNREFUSED)' }]);

    const { delivered } = await throughEsp(started.body.data.esp_url, started.body.data.fields);
    expect(delivered?.status).toBe(303);
    const signer = await signerOf(token);
    expect(signer.status).toBe('completed');
    expect(signer.attempts_left).toBe(1);

    const details = (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body
      .data;
    expect(details.backend).toBe('dead,sandbox');
    expect(details.status).toBe('completed');
    const link = await rest<any>(app, 'GET', '/esign/download-pdf', { token: owner.token, query: { client_id: clientId } });
    const pdf = Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
    const [signature] = await signaturesOf(pdf);
    expect(signature!.verification.digestValid && signature!.verification.signatureValid).toBe(true);
    if (hasPdfsig)
      expect(
        pdfsigReport(pdf)
          .filter((entry) => entry.kind === 'signature')
          .map((entry) => entry.valid),
      ).toEqual([true]);

    const events = await audit(clientId);
    const unavailable = events.filter((event) => event.event === 'esp_unavailable');
    expect(unavailable.map((event) => event.details)).toEqual([
      { backend: 'dead', problem: 'the ESP could not be reached (ECONNREFUSED)' },
    ]);
    expect(events.find((event) => event.event === 'esp_request_sent')!.details.backend).toBe('sandbox');
  });

  it('a configured group is tried in its order; the failures count across processes and the ESP is then skipped', async () => {
    const { clientId, token } = await session('india');
    const started = await start(token);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.data.backend).toBe('sandbox');
    expect(
      (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data.backend,
    ).toBe('india');

    // Two failures in a row (this test's and the one before): the row every process reads says skipped.
    const { rows } = await db.query('select consecutive_failures, skipped_until from esp_health where backend = $1', ['dead']);
    expect(rows[0].consecutive_failures).toBe(2);
    expect(rows[0].skipped_until.getTime()).toBeGreaterThan(Date.now() + 500_000);
    const dead = (await health()).find((esp) => esp.backend === 'dead')!;
    expect(dead).toMatchObject({
      state: 'skipped',
      consecutive_failures: 2,
      failures_total: 2,
      successes_total: 0,
      last_problem: 'the ESP could not be reached (ECONNREFUSED)',
      groups: ['india'],
      version: '2.1',
      built_in: false,
    });
    expect(new Date(dead.skipped_until).getTime()).toBe(rows[0].skipped_until.getTime());

    // Skipped: not contacted, and said so.
    const again = await start(token, { consent: true, restart: true });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.data.failover).toEqual([
      { backend: 'dead', problem: `skipped until ${rows[0].skipped_until.toISOString()}: it failed repeatedly` },
    ]);
    expect((await db.query('select failures_total from esp_health where backend = $1', ['dead'])).rows[0].failures_total).toBe(
      '2',
    );
  });

  it('a gateway answering 5xx is passed over, and once skipped it is not asked again', async () => {
    const { token } = await session('sick,sandbox');
    const hitsBefore = sickHits;
    for (let round = 0; round < 3; round++) {
      const started = await start(token, { consent: true, restart: true });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      expect(started.body.data.backend).toBe('sandbox');
      expect(started.body.data.failover[0].backend).toBe('sick');
      expect(started.body.data.failover[0].problem).toMatch(round < 2 ? /^the ESP answered HTTP 503$/ : /^skipped until /);
    }
    expect(sickHits - hitsBefore).toBe(2);
  });

  it('a 3.2 ESP that is down: its transaction fails as esp_unreachable, no attempt is used, the next ESP takes the signer', async () => {
    const { clientId, token } = await session('down32,sandbox', { max_retry: 1 });
    const started = await start(token);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.data.backend).toBe('sandbox');
    expect(started.body.data.failover).toHaveLength(1);
    expect(started.body.data.failover[0]).toMatchObject({ backend: 'down32' });
    expect(started.body.data.failover[0].problem).toMatch(/could not be reached/);
    const { rows } = await db.query(
      'select backend, status, error_code from esp_transactions where session_id = $1 order by created_at',
      [clientId],
    );
    expect(rows.map((row) => [row.backend, row.status, row.error_code])).toEqual([
      ['down32', 'failed', 'esp_unreachable'],
      ['sandbox', 'pending', null],
    ]);
    const { delivered } = await throughEsp(started.body.data.esp_url, started.body.data.fields);
    expect(delivered?.status).toBe(303);
    expect(await signerOf(token)).toMatchObject({ status: 'completed', attempts_left: 1 });
    expect((await audit(clientId)).map((event) => event.event)).toContain('esp_failed');
  });

  it('every ESP down: 503 naming each, nothing opened, no attempt used however often the signer tries', async () => {
    const { clientId, token } = await session('silent,deadtoo', { max_retry: 1 });
    const first = await start(token);
    expect(first.status).toBe(503);
    expect(first.body.errors).toEqual([
      { field: 'esp', problem: 'silent: the ESP did not answer within 1 s' },
      { field: 'esp', problem: 'deadtoo: the ESP could not be reached (ECONNREFUSED)' },
    ]);
    expect((await start(token)).status).toBe(503);
    // Two failures each: both skipped now, and neither is asked again.
    const third = await start(token);
    expect(third.status).toBe(503);
    expect(third.body.errors!.map((error: { problem: string }) => error.problem)).toEqual([
      expect.stringMatching(/^silent: skipped until /),
      expect.stringMatching(/^deadtoo: skipped until /),
    ]);
    const signer = await signerOf(token);
    expect(signer.status).toBe('pending');
    expect(signer.attempts_left).toBe(1);
    expect(signer.esp_transaction ?? null).toBeNull();
    const unavailable = (await audit(clientId)).filter((event) => event.event === 'esp_unavailable');
    expect(unavailable.length).toBe(6);
  });

  it('the signer’s browser could not open the ESP’s pages: restarting says so, and the next ESP is offered', async () => {
    const { clientId, token } = await session('alive,sandbox');
    const first = await start(token);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.backend).toBe('alive');
    expect(first.body.data.failover).toEqual([]);

    const next = await start(token, { consent: true, restart: true, esp_unreachable: true });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.data.backend).toBe('sandbox');
    expect(next.body.data.failover).toEqual([{ backend: 'alive', problem: "the signer's browser could not open its pages" }]);
    // What one signer says moves that signer only: the ESP's health is what this service observed.
    expect((await health()).find((esp) => esp.backend === 'alive')).toMatchObject({ state: 'healthy', failures_total: 0 });

    const { delivered } = await throughEsp(next.body.data.esp_url, next.body.data.fields);
    expect(delivered?.status).toBe(303);
    expect((await signerOf(token)).status).toBe('completed');
    expect(
      (await audit(clientId)).filter((event) => event.event === 'esp_unavailable').map((event) => event.details.backend),
    ).toEqual(['alive']);
  });

  it('backend: unknown ESPs, an ESP named twice and too many are 400 naming backend; groups are checked at start-up', async () => {
    for (const backend of ['nope,sandbox', 'sandbox,sandbox', 'dead,deadtoo,sick,silent,alive,sandbox']) {
      const refused = await initializeEsign(app, owner.token, sessionBody(file, { sign_type: 'aadhaar', backend }));
      expect(refused.status, backend).toBe(400);
      expect((refused.body as any).errors.map((error: { field: string }) => error.field)).toEqual(['backend']);
    }
    const spaced = await createSession(app, owner.token, sessionBody(file, { sign_type: 'aadhaar', backend: ' Dead , SANDBOX' }));
    const read = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: spaced.client_id } });
    expect(read.body.data.backend).toBe('dead,sandbox');

    expect(() => loadConfig({ ESP_GROUP_INDIA: 'sandbox,nowhere' })).toThrow(/ESP_GROUP_INDIA: nowhere is not a configured ESP/);
    expect(() => loadConfig({ ESP_GROUP_SANDBOX: 'sandbox' })).toThrow(/ESP_GROUP_SANDBOX: sandbox is already an ESP's name/);
  });

  it('the ESP health view is for admins only', async () => {
    const refused = await rest<any>(app, 'GET', '/admin/esps', { token: owner.token });
    expect(refused.status).toBe(403);
    const names = (await health()).map((esp) => esp.backend).sort();
    expect(names).toEqual(['alive', 'dead', 'deadtoo', 'down32', 'sandbox', 'sick', 'silent']);
  });

  describe.skipIf(!hasChromium)('in the browser', () => {
    const browser = useBrowser();

    it('the provider’s page did not open: the waiting step starts again with the next provider, and the signer signs there', async () => {
      const { clientId, token } = await session('alive,sandbox');
      // The signer was sent to the first provider, whose pages never came (here: it answers 405 to everything).
      expect((await start(token)).body.data.backend).toBe('alive');
      const context = await browser().newContext({ ...DESKTOP, reducedMotion: 'reduce' });
      const page = await context.newPage();
      const watched = watchPage(page);
      try {
        const invite = (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } }))
          .body.data.signers[0].invite_url as string;
        await page.goto(invite);
        await page.getByRole('heading', { name: 'Waiting for the eSign provider…' }).waitFor();
        await page.getByRole('button', { name: 'The provider’s page did not open' }).click();
        await page.getByLabel(/I agree to authenticate with Aadhaar/).check();
        await page.getByRole('button', { name: 'Continue to Aadhaar eSign', exact: true }).click();
        await page.waitForURL(/\/sandbox\/esp$/);
        await page.getByRole('textbox', { name: 'Aadhaar number' }).fill('234123412346');
        await page.getByLabel(/I consent to this eSign Service Provider/).check();
        await page.getByRole('button', { name: 'Continue', exact: true }).click();
        await page.getByLabel(/One-time password/).fill(SANDBOX_OTP);
        await page.getByRole('button', { name: 'Sign', exact: true }).click();
        await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
        expect(watched.errors).toEqual([]);
      } finally {
        await context.close();
      }
      const sent = (await audit(clientId)).filter((event) => event.event === 'esp_request_sent');
      expect(sent.map((event) => event.details.backend)).toEqual(['alive', 'sandbox']);
      expect((await signerOf(token)).status).toBe('completed');
    });
  });
});
