/**
 * The DSC bridge (bridge/src), run as a signer runs it (`node bridge/src/main.ts`), against a real SoftHSM2 token
 * that holds an RSA key and its certificate from a test CA, as a DSC USB token would.
 */
import { spawn } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveInBridge, BRIDGE_MAIN, startBridge, waitForBridgeSignature, type BridgeProcess } from '../helpers/bridge';
import { CHROMIUM_PATH, hasChromium, useBrowser } from '../helpers/browser';
import { openssl } from '../helpers/openssl';
import { ROOT } from '../helpers/process';
import { createSoftToken, hasSoftHsm, SOFTHSM_MODULE, type SoftToken } from '../helpers/softhsm';

const ORIGIN = 'https://esign.example.com';
const BRIDGE_VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'bridge/package.json'), 'utf8')) as { version: string }).version;
const OTHER_ORIGIN = 'https://evil.example';

/** Said in the skipped tests' titles and once on the console, so that a skip is never silent. */
const NO_SOFTHSM = hasSoftHsm
  ? ''
  : ` (skipped: SoftHSM2 is missing: softhsm2-util, pkcs11-tool, openssl or ${SOFTHSM_MODULE}; apt-get install softhsm2 opensc openssl)`;
if (!hasSoftHsm) console.warn(`DSC bridge tests with a token${NO_SOFTHSM}`);

interface Issued {
  privateKeyPem: string;
  certificatePem: string;
  der: Buffer;
  serialHex: string;
}

/** A positive serial with no leading zero byte, so that its hex is the same however it is printed. */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = 0x10 + (bytes[0]! % 0x60);
  return bytes.toString('hex');
}

function rsaKey() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    forgePrivate: forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()),
    forgePublic: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
  };
}

/** Names encoded most general first, as CAs issue them. */
function name(commonName: string) {
  return [
    { shortName: 'C', value: 'IN' },
    { shortName: 'O', value: 'Bridge Test Org' },
    { shortName: 'CN', value: commonName },
  ];
}

function makeCa(): Issued & { forgeKey: forge.pki.rsa.PrivateKey; forgeCert: forge.pki.Certificate } {
  const key = rsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = key.forgePublic;
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = new Date(Date.now() + 3 * 365 * 86_400_000);
  cert.setSubject(name('Bridge Test CA 2026'));
  cert.setIssuer(name('Bridge Test CA 2026'));
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key.forgePrivate, forge.md.sha256.create());
  const certificatePem = forge.pki.certificateToPem(cert);
  return {
    privateKeyPem: key.pem,
    certificatePem,
    der: new X509Certificate(certificatePem).raw,
    serialHex: cert.serialNumber,
    forgeKey: key.forgePrivate,
    forgeCert: cert,
  };
}

/** A signer's DSC: digitalSignature + nonRepudiation, issued by `ca`. */
function makeLeaf(ca: ReturnType<typeof makeCa>, commonName: string): Issued {
  const key = rsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = key.forgePublic;
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = new Date(Date.now() + 2 * 365 * 86_400_000);
  cert.setSubject(name(commonName));
  cert.setIssuer(ca.forgeCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, critical: true },
    { name: 'extKeyUsage', emailProtection: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(ca.forgeKey, forge.md.sha256.create());
  const certificatePem = forge.pki.certificateToPem(cert);
  return { privateKeyPem: key.pem, certificatePem, der: new X509Certificate(certificatePem).raw, serialHex: cert.serialNumber };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

/** A request with exactly these headers (fetch would set Host itself and add others). */
function request(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

function api(bridge: BridgeProcess, route: string, init: { method?: string; origin?: string | null; body?: unknown } = {}) {
  const headers: Record<string, string> = { host: `127.0.0.1:${bridge.port}` };
  if (init.origin !== null) headers.origin = init.origin ?? ORIGIN;
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    headers['content-type'] = 'application/json';
  }
  return request(bridge.port, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), path: route, headers, body });
}

/** The SHA-256 of some document bytes: what the service's signing page sends. */
function documentDigest() {
  const data = Buffer.from(`document ${randomBytes(8).toString('hex')}`);
  return { data, digest: createHash('sha256').update(data).digest() };
}

async function createSign(
  bridge: BridgeProcess,
  certificateId: string,
  digest: Buffer,
  extra: Record<string, unknown> = {},
  origin = ORIGIN,
) {
  return api(bridge, '/v1/sign', {
    origin,
    body: {
      certificate_id: certificateId,
      digest: digest.toString('base64'),
      digest_algorithm: 'sha-256',
      description: 'Sale deed, flat 4B, Andheri (3 pages)',
      ...extra,
    },
  });
}

async function statusOf(bridge: BridgeProcess, requestId: string) {
  const answer = await api(bridge, `/v1/sign/${requestId}`);
  expect(answer.status).toBe(200);
  return answer.json as { status: string; signature?: string; error?: { code: string } };
}

async function certificateIdOf(bridge: BridgeProcess): Promise<string> {
  const answer = await api(bridge, '/v1/certificates');
  expect(answer.status).toBe(200);
  expect(answer.json.certificates).toHaveLength(1);
  return answer.json.certificates[0].id as string;
}

/** openssl's verdict on a PKCS#1 v1.5 signature over the SHA-256 DigestInfo, both of `data` and of its bare digest. */
async function opensslVerifies(certificatePem: string, data: Buffer, digest: Buffer, signature: Buffer): Promise<boolean> {
  const pub = await openssl(['x509', '-in', 'cert.pem', '-pubkey', '-noout'], { 'cert.pem': certificatePem });
  expect(pub.status).toBe(0);
  const files = { 'pub.pem': pub.output, 'data.bin': data, 'digest.bin': digest, 'sig.bin': signature };
  const overData = await openssl(['dgst', '-sha256', '-verify', 'pub.pem', '-signature', 'sig.bin', 'data.bin'], files);
  const overDigest = await openssl(
    [
      'pkeyutl',
      '-verify',
      '-pubin',
      '-inkey',
      'pub.pem',
      '-pkeyopt',
      'digest:sha256',
      '-in',
      'digest.bin',
      '-sigfile',
      'sig.bin',
    ],
    files,
  );
  const dataOk = overData.status === 0 && /Verified OK/.test(overData.output);
  const digestOk = overDigest.status === 0 && /Signature Verified Successfully/.test(overDigest.output);
  expect(dataOk).toBe(digestOk);
  return dataOk && digestOk;
}

/** Runs a SoftHSM tool against the token directory of `conf`. */
function runWithConf(conf: string, command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, SOFTHSM2_CONF: conf }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${stderr}`))));
  });
}

/** Runs the bridge with these arguments until it exits by itself. */
function runBridgeToExit(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [BRIDGE_MAIN, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.skipIf(!hasSoftHsm)(`DSC bridge with a SoftHSM2 token${NO_SOFTHSM}`, () => {
  let ca: ReturnType<typeof makeCa>;
  let leaf: Issued;
  let token: SoftToken;
  let bridge: BridgeProcess;
  let certificateId: string;

  beforeAll(async () => {
    ca = makeCa();
    leaf = makeLeaf(ca, 'Asha Verma');
    token = await createSoftToken({
      label: 'ePass2003',
      objects: [{ id: '01', label: 'Asha Verma DSC', privateKeyPem: leaf.privateKeyPem, certificatePem: leaf.certificatePem }],
    });
    bridge = await startBridge({ modules: [SOFTHSM_MODULE], origins: [ORIGIN], env: token.env });
    certificateId = await certificateIdOf(bridge);
  });
  afterAll(async () => {
    await bridge?.stop();
    await token?.cleanup();
  });

  describe('listing the token', () => {
    it('GET /v1/status names the bridge, the loaded library and the token, with CORS headers for the origin', async () => {
      const answer = await api(bridge, '/v1/status');
      expect(answer.status).toBe(200);
      expect(answer.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(answer.headers.vary).toMatch(/\bOrigin\b/);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.json).toMatchObject({
        bridge: 'esign-dsc-bridge',
        version: BRIDGE_VERSION,
        modules: [{ path: SOFTHSM_MODULE, loaded: true }],
      });
      expect(answer.json.tokens).toHaveLength(1);
      expect(answer.json.tokens[0]).toMatchObject({
        module: SOFTHSM_MODULE,
        label: 'ePass2003',
        manufacturer: 'SoftHSM project',
      });
      expect(answer.json.tokens[0].slot_id).toMatch(/^\d+$/);
      expect(answer.json.tokens[0].serial).toMatch(/^[0-9a-f]+$/);
    });

    it('GET /v1/certificates lists the certificate as imported: subject, issuer, serial, validity, DER', async () => {
      const answer = await api(bridge, '/v1/certificates');
      expect(answer.status).toBe(200);
      expect(answer.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(answer.headers.vary).toMatch(/\bOrigin\b/);
      const x509 = new X509Certificate(leaf.certificatePem);
      expect(answer.json.certificates).toEqual([
        {
          id: expect.stringMatching(/^[0-9a-f]{32}$/),
          token_label: 'ePass2003',
          token_serial: expect.any(String),
          label: 'Asha Verma DSC',
          subject: 'CN=Asha Verma, O=Bridge Test Org, C=IN',
          issuer: 'CN=Bridge Test CA 2026, O=Bridge Test Org, C=IN',
          serial_number: leaf.serialHex,
          not_before: x509.validFromDate.toISOString(),
          not_after: x509.validToDate.toISOString(),
          key_type: 'RSA',
          certificate: leaf.der.toString('base64'),
        },
      ]);
      // The same id on every listing: the signing page may remember it.
      expect(answer.json.certificates[0].id).toBe(certificateId);
    });
  });

  describe('who may talk to the bridge', () => {
    it('refuses an origin that is not configured, with no CORS permission', async () => {
      for (const route of ['/v1/status', '/v1/certificates']) {
        const answer = await api(bridge, route, { origin: OTHER_ORIGIN });
        expect(answer.status).toBe(403);
        expect(answer.json).toEqual({ error: { code: 'origin_refused', message: expect.any(String) } });
        expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      }
      // Close look-alikes of the configured origin are other origins.
      for (const origin of [
        'http://esign.example.com',
        'https://esign.example.com:8443',
        'https://esign.example.com.evil.example',
      ]) {
        const answer = await api(bridge, '/v1/certificates', { origin });
        expect(answer.status).toBe(403);
        expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      }
      const signing = await api(bridge, '/v1/sign', {
        origin: OTHER_ORIGIN,
        body: {
          certificate_id: certificateId,
          digest: documentDigest().digest.toString('base64'),
          digest_algorithm: 'sha-256',
          description: 'x',
        },
      });
      expect(signing.status).toBe(403);
      expect(signing.json.error.code).toBe('origin_refused');
    });

    it('refuses a request with no Origin at all (curl, another program, a page that hides its origin)', async () => {
      const answer = await api(bridge, '/v1/certificates', { origin: null });
      expect(answer.status).toBe(403);
      expect(answer.json.error.code).toBe('origin_refused');
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      const nullOrigin = await api(bridge, '/v1/certificates', { origin: 'null' });
      expect(nullOrigin.status).toBe(403);
    });

    it('answers the Private Network Access preflight of an allowed origin only', async () => {
      const preflight = (origin: string) =>
        request(bridge.port, {
          method: 'OPTIONS',
          path: '/v1/sign',
          headers: {
            host: `127.0.0.1:${bridge.port}`,
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type',
            'access-control-request-private-network': 'true',
          },
        });
      const allowed = await preflight(ORIGIN);
      expect(allowed.status).toBe(204);
      expect(allowed.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(allowed.headers['access-control-allow-private-network']).toBe('true');
      expect(allowed.headers['access-control-allow-methods']).toMatch(/\bPOST\b/);
      expect(allowed.headers['access-control-allow-headers']).toMatch(/content-type/i);
      expect(allowed.headers.vary).toMatch(/\bOrigin\b/);

      const refused = await preflight(OTHER_ORIGIN);
      expect(refused.status).toBe(403);
      expect(refused.headers['access-control-allow-origin']).toBeUndefined();
      expect(refused.headers['access-control-allow-private-network']).toBeUndefined();
    });

    it('answers 421 to a Host other than 127.0.0.1 or localhost with its port (DNS rebinding)', async () => {
      for (const host of [
        'evil.example',
        `evil.example:${bridge.port}`,
        '127.0.0.1',
        `127.0.0.1:${bridge.port + 1}`,
        `[::1]:${bridge.port}`,
      ]) {
        for (const route of ['/v1/certificates', '/approve/00000000000000000000000000000000?key=x']) {
          const answer = await request(bridge.port, { path: route, headers: { host, origin: ORIGIN } });
          expect(answer.status, `${host} ${route}`).toBe(421);
          expect(answer.json.error.code).toBe('misdirected_request');
          expect(answer.headers['access-control-allow-origin']).toBeUndefined();
        }
      }
      const localhost = await request(bridge.port, {
        path: '/v1/status',
        headers: { host: `localhost:${bridge.port}`, origin: ORIGIN },
      });
      expect(localhost.status).toBe(200);
    });
  });

  describe('signing', () => {
    it('signs one digest once the signer approves with the right PIN; openssl verifies the signature', async () => {
      const { data, digest } = documentDigest();
      const created = await createSign(bridge, certificateId, digest);
      expect(created.status).toBe(202);
      expect(created.headers['access-control-allow-origin']).toBe(ORIGIN);
      const { request_id: requestId, approve_url: approveUrl, expires_at: expiresAt } = created.json;
      expect(requestId).toMatch(/^[0-9a-f]{32}$/);
      expect(approveUrl).toMatch(
        new RegExp(`^http://127\\.0\\.0\\.1:${bridge.port}/approve/${requestId}\\?key=[A-Za-z0-9_-]{43}$`),
      );
      const lifetime = Date.parse(expiresAt) - Date.now();
      expect(lifetime).toBeGreaterThan(4 * 60_000);
      expect(lifetime).toBeLessThanOrEqual(5 * 60_000);
      expect(await statusOf(bridge, requestId)).toEqual({ status: 'waiting' });

      // The approval page shows what is signed, with whose certificate, and asks for the PIN.
      const page = await fetch(approveUrl);
      const html = await page.text();
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('referrer-policy')).toBe('same-origin');
      expect(html).toContain('https://esign.example.com</strong> asks you to sign');
      expect(html).toContain('Sale deed, flat 4B, Andheri (3 pages)');
      expect(html).toContain('Asha Verma');
      expect(html).toContain('CN=Bridge Test CA 2026, O=Bridge Test Org, C=IN');
      expect(html.replace(/<\/?code>|\s/g, '')).toContain(digest.toString('hex'));
      expect(html).toMatch(/<input id="pin" name="pin" type="password"/);

      const waiting = waitForBridgeSignature(bridge, ORIGIN, requestId);
      const approved = await approveInBridge(approveUrl, token.pin);
      expect(approved.status).toBe(200);
      expect(approved.html).toContain('<h1>Signed</h1>');
      const outcome = await waiting;
      expect(outcome.status).toBe('signed');
      expect(outcome.error).toBeUndefined();
      const signature = Buffer.from(outcome.signature!, 'base64');
      expect(signature).toHaveLength(256);
      expect(await opensslVerifies(leaf.certificatePem, data, digest, signature)).toBe(true);
      // Not a signature that verifies over anything: another document's digest fails.
      const other = documentDigest();
      expect(await opensslVerifies(leaf.certificatePem, other.data, other.digest, signature)).toBe(false);

      // One digest per approval: the link is spent, the outcome stays readable.
      const again = await fetch(approveUrl);
      expect(await again.text()).not.toContain('name="pin"');
      expect(await statusOf(bridge, requestId)).toMatchObject({ status: 'signed', signature: outcome.signature });
      // Another origin may not read the outcome.
      const foreign = await api(bridge, `/v1/sign/${requestId}`, { origin: OTHER_ORIGIN });
      expect(foreign.status).toBe(403);
    });

    it('says the PIN is wrong and keeps the request waiting; the right PIN then signs', async () => {
      const { data, digest } = documentDigest();
      const created = await createSign(bridge, certificateId, digest);
      expect(created.status).toBe(202);
      const { request_id: requestId, approve_url: approveUrl } = created.json;

      const firstLook = await (await fetch(approveUrl)).text();
      expect(firstLook).not.toContain('class="warning"');

      // The bridge keeps no count of its own: any number of wrong PINs leaves the request open, and what the
      // page says about tries comes from the token's flags only (SoftHSM never locks; do not test lockout here).
      for (const wrong of ['0000', '1235', '12345678']) {
        const attempt = await approveInBridge(approveUrl, wrong);
        expect(attempt.status).toBe(200);
        expect(attempt.html).toContain(
          'Wrong PIN. Nothing was signed. Too many wrong PINs lock the token: check the PIN before you try again.',
        );
        expect(attempt.html).not.toContain('last try');
        expect(attempt.html).toMatch(/<input id="pin" name="pin" type="password"/);
        expect(attempt.html).not.toContain(wrong);
        expect(await statusOf(bridge, requestId)).toEqual({ status: 'waiting' });
      }
      // CKF_USER_PIN_COUNT_LOW, which SoftHSM sets after a wrong PIN, now shows on the page.
      const empty = await approveInBridge(approveUrl, '');
      expect(empty.html).toContain('Enter the token&#39;s PIN.');
      expect(empty.html).toContain('A wrong PIN was entered on this token since it was last used. Too many wrong PINs lock it.');
      expect(await statusOf(bridge, requestId)).toEqual({ status: 'waiting' });

      const approved = await approveInBridge(approveUrl, token.pin);
      expect(approved.html).toContain('<h1>Signed</h1>');
      const outcome = await waitForBridgeSignature(bridge, ORIGIN, requestId);
      expect(outcome.status).toBe('signed');
      expect(await opensslVerifies(leaf.certificatePem, data, digest, Buffer.from(outcome.signature!, 'base64'))).toBe(true);

      // The right PIN cleared the token's flag: the next request's page has no warning.
      const next = await createSign(bridge, certificateId, documentDigest().digest);
      expect(await (await fetch(next.json.approve_url)).text()).not.toContain('class="warning"');
      await approveInBridge(next.json.approve_url, '', 'cancel');
    });

    it('cancel on the approval page refuses the request: status refused, error cancelled', async () => {
      const created = await createSign(bridge, certificateId, documentDigest().digest);
      const { request_id: requestId, approve_url: approveUrl } = created.json;
      const waiting = waitForBridgeSignature(bridge, ORIGIN, requestId);
      const cancelled = await approveInBridge(approveUrl, '', 'cancel');
      expect(cancelled.status).toBe(200);
      expect(cancelled.html).toContain('You cancelled. Nothing was signed.');
      expect(await waiting).toEqual({ status: 'refused', error: { code: 'cancelled', message: expect.any(String) } });
      // Spent: signing afterwards with the right PIN changes nothing.
      await expect(approveInBridge(approveUrl, token.pin)).rejects.toThrow(/no form/);
      expect((await statusOf(bridge, requestId)).status).toBe('refused');
    });

    it('refuses an approval form posted from another origin, and keeps the request waiting', async () => {
      const created = await createSign(bridge, certificateId, documentDigest().digest);
      const { request_id: requestId, approve_url: approveUrl } = created.json;
      const html = await (await fetch(approveUrl)).text();
      const key = /name="key" value="([^"]+)"/.exec(html)![1]!;
      const form = new URLSearchParams({ key, pin: token.pin, action: 'sign' }).toString();
      for (const origin of [ORIGIN, OTHER_ORIGIN, 'null']) {
        const posted = await fetch(new URL(`/approve/${requestId}`, approveUrl), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
          body: form,
        });
        expect(posted.status, origin).toBe(403);
        expect(await posted.text()).not.toContain('<h1>Signed</h1>');
      }
      // No Origin header at all (not a browser form) is refused too.
      const bare = await request(bridge.port, {
        method: 'POST',
        path: `/approve/${requestId}`,
        headers: { host: `127.0.0.1:${bridge.port}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
      expect(bare.status).toBe(403);
      expect(await statusOf(bridge, requestId)).toEqual({ status: 'waiting' });
    });

    it('shows no form and reveals nothing of the request for a wrong or missing key', async () => {
      const created = await createSign(bridge, certificateId, documentDigest().digest, {
        description: 'Secret merger term sheet',
      });
      const { request_id: requestId, approve_url: approveUrl } = created.json;
      const url = new URL(approveUrl);
      const key = url.searchParams.get('key')!;
      const wrongKeys = [`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, '', key.slice(0, 20)];
      for (const wrong of wrongKeys) {
        const answer = await fetch(`${url.origin}/approve/${requestId}?key=${encodeURIComponent(wrong)}`);
        const html = await answer.text();
        expect(answer.status).toBe(404);
        expect(html).toContain('Link not valid');
        expect(html).not.toContain('<form');
        expect(html).not.toContain('Secret merger');
        expect(html).not.toContain('Asha Verma');
      }
      const noKey = await fetch(`${url.origin}/approve/${requestId}`);
      expect(noKey.status).toBe(404);
      expect(await noKey.text()).not.toContain('<form');
      // Posting the form with a wrong key signs nothing either.
      const posted = await fetch(`${url.origin}/approve/${requestId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url.origin },
        body: new URLSearchParams({ key: wrongKeys[0]!, pin: token.pin, action: 'sign' }).toString(),
      });
      expect(posted.status).toBe(404);
      expect(await statusOf(bridge, requestId)).toEqual({ status: 'waiting' });
    });

    it('never takes the PIN through the JSON API: a pin field is refused, nothing is created or signed', async () => {
      for (const field of ['pin', 'PIN', 'user_pin', 'password']) {
        const answer = await createSign(bridge, certificateId, documentDigest().digest, { [field]: token.pin });
        expect(answer.status, field).toBe(400);
        expect(answer.json).toEqual({
          error: { code: 'invalid_request', message: 'The PIN is entered in the bridge, never sent.' },
        });
        expect(answer.json.request_id).toBeUndefined();
      }
      // And the bridge does not echo the PIN into its own log.
      expect(bridge.stderr.join('\n')).not.toContain(`"${token.pin}"`);
    });

    it('answers bad input with a clear 4xx JSON error and keeps working', async () => {
      const digest = documentDigest().digest;
      const valid = {
        certificate_id: certificateId,
        digest: digest.toString('base64'),
        digest_algorithm: 'sha-256',
        description: 'Lease',
      };
      const cases: { what: string; send: () => Promise<Answer>; status: number; code: string; message?: RegExp }[] = [
        {
          what: 'bad JSON',
          send: () => api(bridge, '/v1/sign', { body: '{"certificate_id": ' }),
          status: 400,
          code: 'invalid_request',
          message: /not valid JSON/,
        },
        { what: 'an array', send: () => api(bridge, '/v1/sign', { body: [valid] }), status: 400, code: 'invalid_request' },
        {
          what: 'a 31-byte digest',
          send: () => api(bridge, '/v1/sign', { body: { ...valid, digest: randomBytes(31).toString('base64') } }),
          status: 400,
          code: 'invalid_request',
          message: /32 bytes/,
        },
        {
          what: 'a hex digest',
          send: () => api(bridge, '/v1/sign', { body: { ...valid, digest: digest.toString('hex') } }),
          status: 400,
          code: 'invalid_request',
        },
        {
          what: 'sha-1',
          send: () => api(bridge, '/v1/sign', { body: { ...valid, digest_algorithm: 'sha-1' } }),
          status: 400,
          code: 'invalid_request',
          message: /sha-256/,
        },
        {
          what: 'no description',
          send: () => api(bridge, '/v1/sign', { body: { ...valid, description: ' ' } }),
          status: 400,
          code: 'invalid_request',
        },
        {
          what: 'a description hiding text with bidi controls',
          send: () => api(bridge, '/v1/sign', { body: { ...valid, description: 'Lease \u202e000,01 INR' } }),
          status: 400,
          code: 'invalid_request',
        },
        {
          what: 'an unknown certificate_id',
          send: () => api(bridge, '/v1/sign', { body: { ...valid, certificate_id: '0'.repeat(32) } }),
          status: 404,
          code: 'certificate_not_found',
        },
        {
          what: 'a body over 16 KiB',
          send: () => api(bridge, '/v1/sign', { body: { ...valid, description: 'x'.repeat(17 * 1024) } }),
          status: 413,
          code: 'payload_too_large',
        },
        {
          what: 'a body of 2 MiB (not read to its end)',
          send: async () => {
            const response = await fetch(`${bridge.url}/v1/sign`, {
              method: 'POST',
              headers: { origin: ORIGIN, 'content-type': 'application/json' },
              body: JSON.stringify({ ...valid, description: 'x'.repeat(2 * 1024 * 1024) }),
            });
            const text = await response.text();
            return { status: response.status, headers: Object.fromEntries(response.headers), text, json: JSON.parse(text) };
          },
          status: 413,
          code: 'payload_too_large',
        },
        {
          what: 'a form body',
          send: () =>
            request(bridge.port, {
              method: 'POST',
              path: '/v1/sign',
              headers: { host: `127.0.0.1:${bridge.port}`, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
              body: 'certificate_id=x',
            }),
          status: 400,
          code: 'invalid_request',
        },
        { what: 'GET /v1/sign', send: () => api(bridge, '/v1/sign'), status: 405, code: 'method_not_allowed' },
        {
          what: 'an unknown request',
          send: () => api(bridge, `/v1/sign/${'a'.repeat(32)}`),
          status: 404,
          code: 'request_not_found',
        },
        { what: 'an unknown path', send: () => api(bridge, '/v1/keys'), status: 404, code: 'not_found' },
      ];
      for (const { what, send, status, code, message } of cases) {
        const answer = await send();
        expect(answer.status, what).toBe(status);
        expect(answer.headers['content-type'], what).toBe('application/json; charset=utf-8');
        expect(answer.json, what).toEqual({ error: { code, message: expect.any(String) } });
        if (message) expect(answer.json.error.message, what).toMatch(message);
        const status200 = await api(bridge, '/v1/status');
        expect(status200.status, `the bridge answers after ${what}`).toBe(200);
      }
      // wait is checked once the request is known.
      const created = await createSign(bridge, certificateId, digest);
      const tooLong = await api(bridge, `/v1/sign/${created.json.request_id}?wait=26`);
      expect(tooLong.status).toBe(400);
      expect(tooLong.json.error.code).toBe('invalid_request');
    });
  });

  describe.skipIf(!hasChromium)(`in Chromium (${CHROMIUM_PATH})`, () => {
    const browser = useBrowser();

    it('the approval page works as a real browser submits it: the right PIN signs', async () => {
      const { data, digest } = documentDigest();
      const created = await createSign(bridge, certificateId, digest);
      const { request_id: requestId, approve_url: approveUrl } = created.json;
      const context = await browser().newContext();
      try {
        const page = await context.newPage();
        await page.goto(approveUrl);
        await page.fill('#pin', '0000');
        await page.click('button[value=sign]');
        await page.waitForSelector('p.alert');
        expect(await page.textContent('p.alert')).toContain('Wrong PIN');
        await page.fill('#pin', token.pin);
        await page.click('button[value=sign]');
        await page.locator('h1', { hasText: 'Signed' }).waitFor();
      } finally {
        await context.close();
      }
      const outcome = await waitForBridgeSignature(bridge, ORIGIN, requestId);
      expect(outcome.status).toBe('signed');
      expect(await opensslVerifies(leaf.certificatePem, data, digest, Buffer.from(outcome.signature!, 'base64'))).toBe(true);
    });

    /**
     * A context where pages of `origins` (answered by the test, as the service would answer them) have what the
     * signer grants at Chromium's Local Network Access prompt: leave to reach 127.0.0.1. Chromium before Local
     * Network Access has no such permission and needs none.
     */
    async function serviceContext(origins: string[]) {
      const context = await browser().newContext();
      for (const origin of origins) {
        await context.route(`${origin}/**`, (route) =>
          route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Sign</title><p>signing page</p>' }),
        );
      }
      const probe = await context.newPage();
      const { targetInfo } = await (await context.newCDPSession(probe)).send('Target.getTargetInfo');
      const cdp = await browser().newBrowserCDPSession();
      for (const origin of origins) {
        await cdp
          .send('Browser.grantPermissions', {
            origin,
            browserContextId: targetInfo.browserContextId,
            permissions: ['loopbackNetwork' as never],
          })
          .catch(() => undefined);
      }
      await probe.close();
      return context;
    }

    it('the service page lists, asks, and gets the signature through CORS; the signer approves in a new tab', async () => {
      const { data, digest } = documentDigest();
      const context = await serviceContext([ORIGIN]);
      try {
        const page = await context.newPage();
        await page.goto(`${ORIGIN}/sign/envelope-1`);
        const created = await page.evaluate(
          async ({ bridgeUrl, digestBase64 }) => {
            const listing = await (await fetch(`${bridgeUrl}/v1/certificates`)).json();
            const response = await fetch(`${bridgeUrl}/v1/sign`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                certificate_id: listing.certificates[0].id,
                digest: digestBase64,
                digest_algorithm: 'sha-256',
                description: 'Sale deed (browser)',
              }),
            });
            return { status: response.status, body: await response.json(), subject: listing.certificates[0].subject };
          },
          { bridgeUrl: bridge.url, digestBase64: digest.toString('base64') },
        );
        expect(created.status).toBe(202);
        expect(created.subject).toBe('CN=Asha Verma, O=Bridge Test Org, C=IN');

        // The page long-polls while the signer approves in the tab it opened.
        const polled = page.evaluate(
          async ({ bridgeUrl, id }) => {
            for (;;) {
              const answer = await (await fetch(`${bridgeUrl}/v1/sign/${id}?wait=25`)).json();
              if (answer.status !== 'waiting') return answer as { status: string; signature?: string };
            }
          },
          { bridgeUrl: bridge.url, id: created.body.request_id as string },
        );
        const opened = context.waitForEvent('page');
        await page.evaluate((url) => void window.open(url, '_blank', 'noopener'), created.body.approve_url as string);
        const approval = await opened;
        await approval.waitForLoadState();
        expect(await approval.textContent('.description')).toBe('Sale deed (browser)');
        await approval.fill('#pin', token.pin);
        await approval.click('button[value=sign]');
        await approval.locator('h1', { hasText: 'Signed' }).waitFor();

        const outcome = await polled;
        expect(outcome.status).toBe('signed');
        expect(await opensslVerifies(leaf.certificatePem, data, digest, Buffer.from(outcome.signature!, 'base64'))).toBe(true);
      } finally {
        await context.close();
      }
    });

    it('a page of another origin cannot read the bridge, even when allowed to reach 127.0.0.1', async () => {
      const context = await serviceContext([OTHER_ORIGIN]);
      try {
        const page = await context.newPage();
        await page.goto(`${OTHER_ORIGIN}/`);
        const outcome = await page.evaluate(async (bridgeUrl) => {
          try {
            const response = await fetch(`${bridgeUrl}/v1/certificates`);
            return `read: ${response.status} ${await response.text()}`;
          } catch (error) {
            return `refused: ${String(error)}`;
          }
        }, bridge.url);
        expect(outcome).toBe('refused: TypeError: Failed to fetch');
      } finally {
        await context.close();
      }
    });
  });
});

describe.skipIf(!hasSoftHsm)(`DSC bridge when the token is pulled out${NO_SOFTHSM}`, () => {
  let token: SoftToken;
  let bridge: BridgeProcess;
  let leaf: Issued;

  beforeAll(async () => {
    leaf = makeLeaf(makeCa(), 'Ravi Iyer');
    // A PKCS#1 ("BEGIN RSA PRIVATE KEY") key this time: the helper takes either.
    leaf.privateKeyPem = createPrivateKey(leaf.privateKeyPem).export({ type: 'pkcs1', format: 'pem' }).toString();
    expect(leaf.privateKeyPem).toContain('BEGIN RSA PRIVATE KEY');
    token = await createSoftToken({
      objects: [{ id: 'a1b2', label: 'Ravi Iyer', privateKeyPem: leaf.privateKeyPem, certificatePem: leaf.certificatePem }],
    });
    bridge = await startBridge({ modules: [SOFTHSM_MODULE], origins: [ORIGIN, 'http://localhost:3000'], env: token.env });
  });
  afterAll(async () => {
    await bridge?.stop();
    await token?.cleanup();
  });

  it('refuses with token_removed when the token is removed before the signer approves; nothing is listed then', async () => {
    const certificateId = await certificateIdOf(bridge);
    const created = await createSign(bridge, certificateId, documentDigest().digest);
    expect(created.status).toBe(202);
    const { request_id: requestId, approve_url: approveUrl } = created.json;

    await token.remove();
    const waiting = waitForBridgeSignature(bridge, ORIGIN, requestId);
    const approved = await approveInBridge(approveUrl, token.pin);
    expect(approved.status).toBe(200);
    expect(approved.html).toContain('Nothing was signed: the token was removed.');
    expect(await waiting).toEqual({ status: 'refused', error: { code: 'token_removed', message: expect.any(String) } });

    const certificates = await api(bridge, '/v1/certificates');
    expect(certificates.status).toBe(200);
    expect(certificates.json).toEqual({ certificates: [] });
    const status = await api(bridge, '/v1/status');
    expect(status.json.tokens).toEqual([]);
    expect(status.json.modules).toEqual([{ path: SOFTHSM_MODULE, loaded: true }]);
    const unknown = await createSign(bridge, certificateId, documentDigest().digest);
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('certificate_not_found');
  });

  it('sees a token plugged in again while it runs, without a restart', async () => {
    // The second configured origin is allowed as well.
    const before = await api(bridge, '/v1/certificates', { origin: 'http://localhost:3000' });
    expect(before.json.certificates).toEqual([]);
    // The same token directory as the running bridge's: initialise the token again, with its key and certificate.
    await runWithConf(token.conf, 'softhsm2-util', [
      '--init-token',
      '--free',
      '--label',
      token.label,
      '--pin',
      token.pin,
      '--so-pin',
      token.soPin,
    ]);
    await token.add({ id: 'a1b2', label: 'Ravi Iyer', privateKeyPem: leaf.privateKeyPem, certificatePem: leaf.certificatePem });
    const after = await api(bridge, '/v1/certificates', { origin: 'http://localhost:3000' });
    expect(after.status).toBe(200);
    expect(after.headers['access-control-allow-origin']).toBe('http://localhost:3000');
    expect(after.json.certificates).toHaveLength(1);
    expect(after.json.certificates[0]).toMatchObject({
      subject: 'CN=Ravi Iyer, O=Bridge Test Org, C=IN',
      label: 'Ravi Iyer',
      certificate: leaf.der.toString('base64'),
    });
    // A new token (new serial): the certificate has a new id, and signs with it.
    const certificateId = after.json.certificates[0].id as string;
    const { data, digest } = documentDigest();
    const created = await createSign(bridge, certificateId, digest, {}, 'http://localhost:3000');
    expect(created.status).toBe(202);
    await approveInBridge(created.json.approve_url, token.pin);
    const outcome = await waitForBridgeSignature(bridge, 'http://localhost:3000', created.json.request_id);
    expect(outcome.status).toBe('signed');
    expect(await opensslVerifies(leaf.certificatePem, data, digest, Buffer.from(outcome.signature!, 'base64'))).toBe(true);
  });
});

// These need no token: they run without SoftHSM too.
describe('DSC bridge configuration', () => {
  it('refuses --host (and ESIGN_BRIDGE_HOST) with exit code 2: it listens on 127.0.0.1 only', async () => {
    const flag = await runBridgeToExit(['--module', SOFTHSM_MODULE, '--origin', ORIGIN, '--host', '0.0.0.0']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--host is not supported: the bridge listens on 127.0.0.1 only');
    expect(flag.stdout).not.toContain('listening');
    const env = await runBridgeToExit(['--module', SOFTHSM_MODULE, '--origin', ORIGIN], { ESIGN_BRIDGE_HOST: '0.0.0.0' });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('ESIGN_BRIDGE_HOST is not supported');
  });

  it('refuses to start with no --origin (exit code 2, a message and the usage)', async () => {
    const answer = await runBridgeToExit(['--module', SOFTHSM_MODULE]);
    expect(answer.code).toBe(2);
    expect(answer.stderr).toContain('give at least one --origin (the signing service, e.g. https://esign.example.com)');
    expect(answer.stderr).toContain('Usage: esign-dsc-bridge');
  });

  it('starts with a library that does not load, and says why in /v1/status', async () => {
    const bridge = await startBridge({ modules: ['/nonexistent/libcastle.so'], origins: [ORIGIN] });
    try {
      expect(bridge.stderr.join('\n')).toContain('esign-dsc-bridge: /nonexistent/libcastle.so: could not load the library');
      const status = await api(bridge, '/v1/status');
      expect(status.status).toBe(200);
      expect(status.json.tokens).toEqual([]);
      expect(status.json.modules).toEqual([
        {
          path: '/nonexistent/libcastle.so',
          loaded: false,
          error: expect.stringMatching(/^could not load the library: .*No such file/),
        },
      ]);
      expect((await api(bridge, '/v1/certificates')).json).toEqual({ certificates: [] });
    } finally {
      await bridge.stop();
    }
  });

  it('exits with 1 and a hint when its port is taken (another bridge running)', async () => {
    const first = await startBridge({ modules: ['/nonexistent/libcastle.so'], origins: [ORIGIN] });
    try {
      const second = await runBridgeToExit([
        '--module',
        '/nonexistent/libcastle.so',
        '--origin',
        ORIGIN,
        '--port',
        String(first.port),
      ]);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`cannot listen on 127.0.0.1:${first.port}`);
      expect(second.stderr).toContain('is another bridge running?');
    } finally {
      await first.stop();
    }
  });

  it('refuses an origin with a path, and a bad port, with exit code 2', async () => {
    const withPath = await runBridgeToExit(['--module', SOFTHSM_MODULE, '--origin', 'https://esign.example.com/sign']);
    expect(withPath.code).toBe(2);
    expect(withPath.stderr).toContain('did you mean "https://esign.example.com"?');
    const port = await runBridgeToExit(['--module', SOFTHSM_MODULE, '--origin', ORIGIN, '--port', '70000']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('is not a port number');
  });
});
