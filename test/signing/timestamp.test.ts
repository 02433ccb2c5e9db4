import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signAsAadhaar, signatureAt, signerInput, uploadPdf } from '../helpers/factories';
import { hasOpenssl } from '../helpers/openssl';
import { hasPdfsig, pdfsigReport, signaturesOf } from '../helpers/pdf-signatures';
import { uploadTestPfx } from '../helpers/pfx';
import { ConfigError, loadConfig } from '../../src/config';
import { OID } from '../../src/modules/signing/cms-algorithms';
import { children, contentOf, raw, readOid, readRoot } from '../../src/modules/signing/der';
import { sandboxRootCa } from '../../src/modules/sandbox/sandbox-ca';
import { answerTimestampRequest, SANDBOX_TSA_POLICY, sandboxTsaIdentity } from '../../src/modules/sandbox/tsa/sandbox-tsa';
import { encodeTimestampRequest, encodeTimestampResponse } from '../../src/modules/signing/tsa/timestamp-protocol';

/** The signature value and the signature time-stamp token (unsigned attribute) of a CMS from a PDF. */
function timestampOf(cms: Buffer): { signatureValue: Buffer; token: Buffer | null } {
  const signedData = children(cms, children(cms, children(cms, readRoot(cms))[1]!)[0]!);
  const signerInfo = children(cms, children(cms, signedData.at(-1)!)[0]!);
  const unsigned = signerInfo.at(-1)!.tag === 0xa1 ? signerInfo.pop()! : undefined;
  const signatureValue = contentOf(cms, signerInfo.at(-1)!);
  for (const attribute of unsigned ? children(cms, unsigned) : []) {
    const [type, values] = children(cms, attribute);
    if (readOid(cms, type) === OID.signatureTimeStampToken)
      return { signatureValue, token: raw(cms, children(cms, values!)[0]!) };
  }
  return { signatureValue, token: null };
}

/** `openssl ts -verify` of a token over a digest, against the given root: its verdict, and the token's text. */
function opensslVerifyToken(token: Buffer, digest: Buffer, rootPem: string): { ok: boolean; output: string; text: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tsa-'));
  try {
    writeFileSync(path.join(dir, 'token.der'), token);
    writeFileSync(path.join(dir, 'root.pem'), rootPem);
    const verify = spawnSync(
      'openssl',
      ['ts', '-verify', '-token_in', '-in', 'token.der', '-digest', digest.toString('hex'), '-CAfile', 'root.pem'],
      { cwd: dir, encoding: 'utf8' },
    );
    const text = execFileSync('openssl', ['ts', '-reply', '-token_in', '-in', 'token.der', '-token_out', '-text'], {
      cwd: dir,
      encoding: 'utf8',
    });
    return { ok: verify.status === 0 && /Verification: OK/.test(verify.stdout), output: verify.stdout + verify.stderr, text };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('PAdES B-T: an RFC 3161 signature time-stamp on every signature', () => {
  let app: TestApp;
  let owner: TestUser;
  let rootPem: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    rootPem = (await sandboxRootCa(app.services, app.services.orm.em.fork())).certificatePem;
  });
  afterAll(async () => app.close());

  it.skipIf(!hasOpenssl)('the sandbox TSA answers a request made by openssl, and openssl verifies the reply', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tsq-'));
    try {
      writeFileSync(path.join(dir, 'data.txt'), 'what is stamped');
      execFileSync('openssl', ['ts', '-query', '-data', 'data.txt', '-sha256', '-cert', '-out', 'request.tsq'], { cwd: dir });
      const response = await fetch(new URL('/sandbox/tsa', app.url), {
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query' },
        body: readFileSync(path.join(dir, 'request.tsq')),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/timestamp-reply');
      writeFileSync(path.join(dir, 'reply.tsr'), Buffer.from(await response.arrayBuffer()));
      writeFileSync(path.join(dir, 'root.pem'), rootPem);
      const text = execFileSync('openssl', ['ts', '-reply', '-in', 'reply.tsr', '-text'], { cwd: dir, encoding: 'utf8' });
      expect(text).toContain('Status: Granted.');
      expect(text).toContain(`Policy OID: ${SANDBOX_TSA_POLICY}`);
      const verified = spawnSync(
        'openssl',
        ['ts', '-verify', '-in', 'reply.tsr', '-queryfile', 'request.tsq', '-CAfile', 'root.pem'],
        {
          cwd: dir,
          encoding: 'utf8',
        },
      );
      expect(verified.stdout + verified.stderr).toContain('Verification: OK');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the sandbox TSA refuses what is not a SHA-256 time-stamp request, in the protocol (and 415 for other bodies)', async () => {
    const identity = await sandboxTsaIdentity(app.services, app.services.orm.em.fork());
    // A TimeStampResp whose status is rejection (2): bytes 30 .. 30 .. 02 01 02.
    expect(answerTimestampRequest(identity, Buffer.from('not a request')).subarray(0, 7).toString('hex')).toMatch(
      /^30..30..020102/,
    );
    const garbage = await fetch(new URL('/sandbox/tsa', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query' },
      body: Buffer.from([0x30, 0x80, 0xff]),
    });
    expect(garbage.status).toBe(200);
    expect(
      Buffer.from(await garbage.arrayBuffer())
        .subarray(0, 7)
        .toString('hex'),
    ).toMatch(/^30..30..020102/);
    const json = await fetch(new URL('/sandbox/tsa', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(json.status).toBe(415);
  });

  it('stamps the signature value of every signer (aadhaar, suresign, pfx); openssl verifies each token and pdfsig each signature', async () => {
    const pfxId = await uploadTestPfx(app, owner.token, { commonName: 'Acme Legal Seal' });
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signers: [
          signerInput({ full_name: 'Asha Rao', sign_type: 'aadhaar', elements: [signatureAt(0, 72, 640)] }),
          signerInput({ full_name: 'Esign Platform', elements: [signatureAt(0, 72, 500)] }),
          signerInput({ full_name: 'Acme Legal', sign_type: 'pfx', pfx_id: pfxId, elements: [signatureAt(0, 300, 500)] }),
        ],
      }),
    );
    const [aadhaar, suresign, pfx] = session.signers;
    expect((await signAsAadhaar(app, aadhaar.token)).status).toBe(200);
    expect((await signerApi(app, 'POST', '/sign', suresign.token, { consent: true })).status).toBe(200);
    expect((await signerApi(app, 'POST', '/sign', pfx.token, { consent: true })).status).toBe(200);

    const link = await rest<any>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    const pdf = Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
    const embedded = await signaturesOf(pdf);
    expect(embedded).toHaveLength(3);
    const before = Date.now();
    for (const signature of embedded) {
      expect(signature.verification.digestValid && signature.verification.signatureValid).toBe(true);
      const { signatureValue, token } = timestampOf(signature.cms);
      expect(token, 'a signature time-stamp token').not.toBeNull();
      if (hasOpenssl) {
        const verdict = opensslVerifyToken(token!, createHash('sha256').update(signatureValue).digest(), rootPem);
        expect(verdict.ok, verdict.output).toBe(true);
        expect(verdict.text).toContain(`Policy OID: ${SANDBOX_TSA_POLICY}`);
        expect(verdict.text).toMatch(/Accuracy: 0x01 seconds/);
        const time = /Time stamp: (.+)/.exec(verdict.text)![1]!;
        expect(Math.abs(new Date(time).getTime() - before)).toBeLessThan(10 * 60_000);
      }
    }
    if (hasPdfsig) {
      // pdfsig lists the completion's document time-stamp too, last and over the whole file (it cannot validate one).
      const report = pdfsigReport(pdf);
      expect(report.map((entry) => entry.kind)).toEqual(['signature', 'signature', 'signature', 'document-timestamp']);
      expect(report.filter((entry) => entry.kind === 'signature').every((entry) => entry.valid)).toBe(true);
      expect(report.at(-1)!.total).toBe(true);
    }
  });
});

describe('a TSA that does not give a valid token', () => {
  let tsa: http.Server;
  let answers: ((res: http.ServerResponse, body: Buffer) => void)[];
  let requests = 0;
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    answers = [];
    tsa = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        requests++;
        const answer = answers.shift();
        if (answer) answer(res, Buffer.concat(chunks));
        else res.writeHead(503).end();
      });
    });
    await new Promise<void>((resolve) => tsa.listen(0, '127.0.0.1', () => resolve()));
    app = await startTestApp({
      env: { TSA_URL: `http://127.0.0.1:${(tsa.address() as AddressInfo).port}/tsr`, TSA_RETRIES: '2', TSA_TIMEOUT_MS: '2000' },
    });
    owner = await app.createUser();
  });
  afterAll(async () => {
    await app.close();
    await new Promise((resolve) => tsa.close(resolve));
  });

  async function suresignSession() {
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { signers: [signerInput({ elements: [signatureAt()] })] }),
    );
    return { session, token: session.signers[0]!.token };
  }

  const sign = (token: string) => signerApi(app, 'POST', '/sign', token, { consent: true });

  it('a refusal fails the signature with 503 service_unavailable at once, and nothing is signed', async () => {
    const { session, token } = await suresignSession();
    requests = 0;
    answers.push((res) =>
      res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(encodeTimestampResponse(2, undefined, 15, 'no')),
    );
    const refused = await sign(token);
    expect(refused.status).toBe(503);
    expect(refused.body.status_code).toBe(503);
    expect(refused.body.message).toMatch(/time-stamping authority .*refused.*nothing was signed/);
    expect(requests).toBe(1); // a refusal is not retried
    const details = await rest<any>(app, 'GET', '/esign/details', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    expect(details.body.data.status).toBe('pending');
    expect(details.body.data.signers[0].status).toBe('pending');
    const audit = await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } });
    expect(audit.body.data.events.map((event: { event: string }) => event.event)).not.toContain('signed');
  });

  it('a token over another digest, or with another nonce, is refused too', async () => {
    const { token } = await suresignSession();
    const identity = await sandboxTsaIdentity(app.services, app.services.orm.em.fork());
    // A genuine token from the sandbox TSA, but for a request that is not ours.
    const otherRequest = encodeTimestampRequest({ digest: Buffer.alloc(32), nonce: Buffer.from([1, 2, 3, 4]) });
    answers.push((res) => res.writeHead(200).end(answerTimestampRequest(identity, otherRequest)));
    const refused = await sign(token);
    expect(refused.status).toBe(503);
    expect(refused.body.message).toContain('TSA token stamps another digest');
  });

  it('network failures and 5xx answers are retried (TSA_RETRIES), then the signature is made', async () => {
    const { session, token } = await suresignSession();
    const identity = await sandboxTsaIdentity(app.services, app.services.orm.em.fork());
    requests = 0;
    answers.push((res) => res.writeHead(500).end());
    answers.push((res) => res.socket?.destroy());
    const granted = (res: http.ServerResponse, body: Buffer) =>
      res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(answerTimestampRequest(identity, body));
    answers.push(granted);
    // The session completes: its document time-stamp (PADES_LTV) is the TSA's next request, then the certificate
    // of completion's signature time-stamp and its own document time-stamp.
    answers.push(granted, granted, granted);
    const signed = await sign(token);
    expect(signed.status).toBe(200);
    expect(requests).toBe(6);
    const details = await rest<any>(app, 'GET', '/esign/details', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    expect(details.body.data.status).toBe('completed');
  });
});

describe('configuration', () => {
  const production = {
    APP_ENV: 'production',
    URL_SIGNING_SECRET: 'a-production-url-signing-secret',
    SECRETS_ENCRYPTION_KEY: 'a-production-secrets-encryption-key',
    DATABASE_URL: 'postgresql://db.example/esign',
    PUBLIC_URL: 'https://esign.example',
    PLATFORM_SIGNING_PFX: '/etc/esign/platform.p12',
    ALLOW_SANDBOX_ESP: 'true',
    ALLOW_SIMULATED_VENDOR: 'true',
  };

  it('production refuses to start without TSA_URL unless signing without trusted time is explicitly allowed', () => {
    expect(() => loadConfig(production)).toThrow(ConfigError);
    expect(() => loadConfig(production)).toThrow(/TSA_URL/);
    expect(loadConfig({ ...production, ALLOW_SIGNING_WITHOUT_TIMESTAMP: 'true' }).tsa).toBeUndefined();
    const configured = loadConfig({
      ...production,
      TSA_URL: 'https://tsa.example/tsr',
      TSA_AUTH_HEADER: 'Authorization: Basic dXNlcjpwYXNz',
      TSA_POLICY_OID: '1.2.3.4.1',
    });
    expect(configured.tsa).toEqual({
      url: 'https://tsa.example/tsr',
      authHeader: { name: 'Authorization', value: 'Basic dXNlcjpwYXNz' },
      policyOid: '1.2.3.4.1',
      timeoutMs: 10_000,
      retries: 2,
    });
  });

  it('the sandbox stamps with its own TSA by default', () => {
    expect(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:4000' }).tsa?.url).toBe('http://127.0.0.1:4000/sandbox/tsa');
  });
});
