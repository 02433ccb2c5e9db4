import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signAsAadhaar, signatureAt, signerInput, uploadPdf } from '../helpers/factories';
import { hasOpenssl, openssl } from '../helpers/openssl';
import { signaturesOf } from '../helpers/pdf-signatures';
import { platformSigningIdentity } from '../../src/modules/signing/platform-identity';
import { sandboxEspCa, sandboxRootCa } from '../../src/modules/sandbox/sandbox-ca';
import { sandboxTsaIdentity } from '../../src/modules/sandbox/tsa/sandbox-tsa';
import { createRootCa, issueSigningCertificate } from '../../src/modules/signing/certificates';
import { fetchRevocation } from '../../src/modules/signing/revocation/revocation-client';
import { fetchPublicOnly } from '../../src/platform/net/public-targets';

describe.skipIf(!hasOpenssl)('the sandbox CA publishes CRLs and answers OCSP, and its certificates say where', () => {
  let app: TestApp;
  let owner: TestUser;
  let rootPem: string;
  let espCaPem: string;
  let aadhaarCertificatePem: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    rootPem = (await sandboxRootCa(app.services, app.services.orm.em.fork())).certificatePem;
    espCaPem = (await sandboxEspCa(app.services, app.services.orm.em.fork())).certificatePem;

    // A real Aadhaar signature, to have the certificate the sandbox ESP issued for it.
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { signers: [signerInput({ full_name: 'Asha Rao', sign_type: 'aadhaar', elements: [signatureAt()] })] }),
    );
    await signAsAadhaar(app, session.signers[0]!.token);
    const link = await rest<any>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    const pdf = Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
    aadhaarCertificatePem = (await signaturesOf(pdf))[0]!.verification.signerCertificatePem;
  });
  afterAll(async () => app.close());

  it('every certificate below the root names its CRL, its OCSP responder and its issuer', async () => {
    const signer = (await platformSigningIdentity(app.services, app.services.orm.em.fork())).certificatePem;
    const tsa = (await sandboxTsaIdentity(app.services, app.services.orm.em.fork())).certificatePem;
    for (const [pem, issuer] of [
      [signer, 'root'],
      [tsa, 'root'],
      [espCaPem, 'root'],
      [aadhaarCertificatePem, 'esp'],
    ] as const) {
      const text = execFileSync('openssl', ['x509', '-noout', '-text'], { input: pem, encoding: 'utf8' });
      expect(text).toContain(`URI:${app.url}/sandbox/ca/${issuer}.crl`);
      expect(text).toContain(`OCSP - URI:${app.url}/sandbox/ocsp`);
      expect(text).toContain(`CA Issuers - URI:${app.url}/sandbox/ca/${issuer}.cer`);
    }
  });

  it('serves each CA certificate and a CRL signed by it, which openssl verifies', async () => {
    for (const [issuer, pem] of [
      ['root', rootPem],
      ['esp', espCaPem],
    ] as const) {
      const certificate = await fetch(new URL(`/sandbox/ca/${issuer}.cer`, app.url));
      expect(certificate.headers.get('content-type')).toBe('application/pkix-cert');
      const served = Buffer.from(await certificate.arrayBuffer());
      const asPem = execFileSync('openssl', ['x509', '-inform', 'DER'], { input: served, encoding: 'utf8' });
      expect(asPem.replace(/\r/g, '').trim()).toBe(pem.replace(/\r/g, '').trim());

      const crlResponse = await fetch(new URL(`/sandbox/ca/${issuer}.crl`, app.url));
      expect(crlResponse.status).toBe(200);
      expect(crlResponse.headers.get('content-type')).toBe('application/pkix-crl');
      const crl = Buffer.from(await crlResponse.arrayBuffer());
      const verified = await openssl(['crl', '-inform', 'DER', '-in', 'list.crl', '-CAfile', 'ca.pem', '-noout', '-text'], {
        'list.crl': crl,
        'ca.pem': pem,
      });
      expect(verified.output, verified.output).toContain('verify OK');
      expect(verified.output).toContain('No Revoked Certificates');
      expect(verified.output).toMatch(/Next Update: /);
    }
    expect((await fetch(new URL('/sandbox/ca/other.crl', app.url))).status).toBe(404);
  });

  it('answers OCSP for the certificates each CA issued (good, nonce repeated); openssl verifies the answers', async () => {
    const signer = (await platformSigningIdentity(app.services, app.services.orm.em.fork())).certificatePem;
    for (const [pem, issuerPem] of [
      [signer, rootPem],
      [aadhaarCertificatePem, espCaPem],
    ] as const) {
      const asked = await openssl(
        [
          'ocsp',
          '-issuer',
          'issuer.pem',
          '-cert',
          'cert.pem',
          '-url',
          `${app.url}/sandbox/ocsp`,
          '-CAfile',
          'root.pem',
          '-resp_text',
        ],
        { 'issuer.pem': issuerPem, 'cert.pem': pem, 'root.pem': rootPem },
      );
      expect(asked.status, asked.output).toBe(0);
      expect(asked.output).toContain('Response verify OK');
      expect(asked.output).toContain('cert.pem: good');
      expect(asked.output).toContain('OCSP Nonce');
      expect(asked.output).not.toContain('WARNING');
    }
  });

  it('answers the GET form too, and refuses what it cannot answer in the protocol', async () => {
    const signer = (await platformSigningIdentity(app.services, app.services.orm.em.fork())).certificatePem;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ocsp-get-'));
    try {
      writeFileSync(path.join(dir, 'issuer.pem'), rootPem);
      writeFileSync(path.join(dir, 'cert.pem'), signer);
      execFileSync('openssl', ['ocsp', '-issuer', 'issuer.pem', '-cert', 'cert.pem', '-no_nonce', '-reqout', 'req.der'], {
        cwd: dir,
      });
      const request = (await import('node:fs')).readFileSync(path.join(dir, 'req.der'));
      const response = await fetch(new URL(`/sandbox/ocsp/${encodeURIComponent(request.toString('base64'))}`, app.url));
      expect(response.headers.get('content-type')).toBe('application/ocsp-response');
      writeFileSync(path.join(dir, 'resp.der'), Buffer.from(await response.arrayBuffer()));
      writeFileSync(path.join(dir, 'root.pem'), rootPem);
      const read = spawnSync(
        'openssl',
        ['ocsp', '-respin', 'resp.der', '-issuer', 'issuer.pem', '-cert', 'cert.pem', '-CAfile', 'root.pem', '-no_nonce'],
        { cwd: dir, encoding: 'utf8' },
      );
      expect(read.stdout + read.stderr).toContain('cert.pem: good');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    const garbage = await fetch(new URL('/sandbox/ocsp', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/ocsp-request' },
      body: Buffer.from([0x30, 0x03, 0x02, 0x01, 0x00]),
    });
    expect(garbage.status).toBe(200);
    // OCSPResponse { responseStatus malformedRequest (1) }, no responseBytes.
    expect(Buffer.from(await garbage.arrayBuffer()).toString('hex')).toBe('30030a0101');
    const wrongType = await fetch(new URL('/sandbox/ocsp', app.url), { method: 'POST', body: 'x' });
    expect(wrongType.status).toBe(415);
  });
});

describe('fetching revocation data for a certificate (what B-LT embeds)', () => {
  let app: TestApp;
  const anywhere = { timeoutMs: 3000, publicOnly: false };

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app.close());

  it('asks the OCSP responder the certificate names, and checks the answer', async () => {
    const root = await sandboxRootCa(app.services, app.services.orm.em.fork());
    const signer = await platformSigningIdentity(app.services, app.services.orm.em.fork());
    const evidence = await fetchRevocation(signer.certificatePem, root.certificatePem, anywhere);
    expect(evidence).toMatchObject({ status: 'good', source: 'ocsp', problems: [] });
    // What was kept is the responder's answer itself, which openssl reads as a good answer for that certificate.
    const read = await openssl(
      ['ocsp', '-respin', 'resp.der', '-issuer', 'issuer.pem', '-cert', 'cert.pem', '-CAfile', 'issuer.pem', '-no_nonce'],
      {
        'resp.der': evidence.data!,
        'issuer.pem': root.certificatePem,
        'cert.pem': signer.certificatePem,
      },
    );
    expect(read.output).toContain('cert.pem: good');
  });

  it('falls back to the CRL when the responder cannot be reached, and says so', async () => {
    const root = await sandboxRootCa(app.services, app.services.orm.em.fork());
    const now = Date.now();
    const certificate = issueSigningCertificate(
      root,
      { commonName: 'Responder Down' },
      { notBefore: new Date(now - 60_000), notAfter: new Date(now + 3_600_000) },
      { revocation: { ocspUrl: 'http://127.0.0.1:1/ocsp', crlUrl: `${app.url}/sandbox/ca/root.crl` } },
    );
    const evidence = await fetchRevocation(certificate.certificatePem, root.certificatePem, anywhere);
    expect(evidence).toMatchObject({ status: 'good', source: 'crl' });
    expect(evidence.problems[0]).toMatch(/^OCSP http:\/\/127\.0\.0\.1:1\/ocsp: /);
  });

  it('reports a certificate that names no source, or whose sources fail, as unavailable', async () => {
    const root = await sandboxRootCa(app.services, app.services.orm.em.fork());
    const now = Date.now();
    const bare = issueSigningCertificate(
      root,
      { commonName: 'No Pointers' },
      { notBefore: new Date(now - 60_000), notAfter: new Date(now + 3_600_000) },
    );
    expect(await fetchRevocation(bare.certificatePem, root.certificatePem, anywhere)).toMatchObject({
      status: 'unavailable',
      source: null,
      problems: ['the certificate names no OCSP responder and no CRL'],
    });
    // An answer signed by another CA is not evidence.
    const stranger = createRootCa('Stranger CA', 'Elsewhere');
    const forged = await fetchRevocation(
      (await platformSigningIdentity(app.services, app.services.orm.em.fork())).certificatePem,
      stranger.certificatePem,
      anywhere,
    );
    expect(forged.status).toBe('unavailable');
  });

  it('refuses to fetch from private addresses when told to (production)', async () => {
    const root = await sandboxRootCa(app.services, app.services.orm.em.fork());
    const signer = await platformSigningIdentity(app.services, app.services.orm.em.fork());
    const guarded = await fetchRevocation(signer.certificatePem, root.certificatePem, {
      timeoutMs: 3000,
      publicOnly: true,
    });
    expect(guarded.status).toBe('unavailable');
    expect(guarded.problems.join('\n')).toMatch(/not a public address/);
    // A name is resolved and checked where the connection is made (a name that resolves to loopback by then is
    // refused, however it resolved before): the app answers on 127.0.0.1, reached here as `localhost`.
    const byName = new URL(`/healthz`, app.url.replace('127.0.0.1', 'localhost'));
    const refused = await fetchPublicOnly(byName, {}).then(
      () => null,
      (error: Error & { cause?: Error }) => error.cause?.message ?? error.message,
    );
    expect(refused).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/);
    expect((await fetch(byName)).status).toBe(200);
  });
});
