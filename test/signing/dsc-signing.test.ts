import { spawnSync } from 'node:child_process';
import { constants, privateEncrypt, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRootCa, issueSigningCertificate } from '../../src/modules/signing/certificates';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { approveInBridge, startBridge, waitForBridgeSignature, type BridgeProcess } from '../helpers/bridge';
import { rest, signerApi } from '../helpers/clients';
import { createSession, initializeEsign, sessionBody, signatureAt, signerInput, uploadPdf } from '../helpers/factories';
import { hasOpenssl, openssl } from '../helpers/openssl';
import { hasPdfsig, hasQpdf, longTermTailProblems, pdfsigReport, qpdfCheck, signaturesOf } from '../helpers/pdf-signatures';
import { createSoftToken, hasSoftHsm, SOFTHSM_MODULE, type SoftToken } from '../helpers/softhsm';

/**
 * DSC signing (issue 35), through the signer API as the signing page drives it. The certificates come from the
 * sandbox's DSC CA (POST /sandbox/dsc/certificates), which the service trusts in sandbox and whose OCSP responder
 * answers revoked for what it revoked; an untrusted one from a CA of the test's own. The whole journey goes through
 * a SoftHSM2 token and the bridge (bridge/), and the signed document is judged by pdfsig, qpdf and openssl.
 */

interface IssuedDsc {
  private_key: string;
  certificate: string;
  chain: string[];
  serial: string;
}

const DIGEST_INFO_SHA256 = Buffer.from('3031300d060960864801650304020105000420', 'hex');
const der = (pem: string) => new X509Certificate(pem).raw.toString('base64');

describe('DSC signing: the signer’s own certificate, checked, on their token', () => {
  let app: TestApp;
  let owner: TestUser;
  let file: string;

  const issue = async (body: Record<string, unknown>): Promise<IssuedDsc> => {
    const response = await fetch(new URL('/sandbox/dsc/certificates', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const envelope = (await response.json()) as { data: IssuedDsc };
    expect(response.status, JSON.stringify(envelope)).toBe(200);
    return envelope.data;
  };
  const dscSession = async (signer: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
    createSession(
      app,
      owner.token,
      sessionBody(file, {
        sign_type: 'dsc',
        max_retry: 2,
        signers: [signerInput({ full_name: 'Ravi Kumar Sharma', elements: [signatureAt(0, 72, 640)], ...signer })],
        ...extra,
      }),
    );
  const start = (token: string, issued: { certificate: string; chain?: string[] }) =>
    signerApi(app, 'POST', '/dsc/start', token, {
      consent: true,
      certificate: der(issued.certificate),
      chain: (issued.chain ?? []).map(der),
    });
  /** The token's part, done by the test with the key itself: PKCS#1 v1.5 over the DigestInfo, as CKM_RSA_PKCS signs. */
  const tokenSignature = (privateKeyPem: string, digestBase64: string) =>
    privateEncrypt(
      { key: privateKeyPem, padding: constants.RSA_PKCS1_PADDING },
      Buffer.concat([DIGEST_INFO_SHA256, Buffer.from(digestBase64, 'base64')]),
    ).toString('base64');
  const attemptsLeft = async (token: string) => (await signerApi(app, 'GET', '/session', token)).body.data.signer.attempts_left;

  beforeAll(async () => {
    app = await startTestApp({ env: { PADES_LTV: 'true' } });
    owner = await app.createUser();
    file = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app.close());

  it('accepts sign_type dsc with a certificate rule for dsc signers only', async () => {
    const refused = await initializeEsign(
      app,
      owner.token,
      sessionBody(file, { signers: [signerInput({ dsc_certificate: { pan: 'ABCDE1234F' } })] }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toContainEqual({
      field: 'signers[0].dsc_certificate',
      problem: 'applies only to signers who sign with dsc',
    });
    const badPan = await initializeEsign(
      app,
      owner.token,
      sessionBody(file, { sign_type: 'dsc', signers: [signerInput({ dsc_certificate: { pan: '12345' } })] }),
    );
    expect(badPan.status).toBe(400);
    expect(badPan.body.errors?.[0]?.field).toBe('signers[0].dsc_certificate.pan');
    const session = await dscSession();
    expect(session.signers[0]).toMatchObject({ sign_type: 'dsc', name_match: { enforce: true, status: 'pending' } });
    // A DSC signer does not sign with the platform's key.
    const suresign = await signerApi(app, 'POST', '/sign', session.signers[0]!.token, { consent: true });
    expect(suresign.status).toBe(409);
  });

  it('signs in two steps: the token’s signature verifies, the document completes at B-LTA, outside tools agree', async () => {
    const issued = await issue({ common_name: 'RAVI KUMAR SHARMA', organisation: 'Sharma Traders', pan: 'ABCDE1234F' });
    const session = await dscSession({ dsc_certificate: { pan: 'abcde1234f', organisation: 'sharma traders' } });
    const token = session.signers[0]!.token;
    const started = await start(token, issued);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const { txn, documents, certificate } = started.body.data;
    expect(txn).toMatch(/^dsctxn_[0-9a-f]{32}$/);
    expect(certificate.serial_number).toBe(issued.serial);
    expect(documents).toHaveLength(1);
    expect(Buffer.from(documents[0].digest, 'base64')).toHaveLength(32);
    expect(documents[0].description).toContain(session.client_id);

    // A signature by another key is refused, costs no attempt, and ends the transaction.
    const stranger = await issue({ common_name: 'RAVI KUMAR SHARMA' });
    const wrong = await signerApi(app, 'POST', '/dsc/complete', token, {
      txn,
      signatures: [{ position: 0, signature: tokenSignature(stranger.private_key, documents[0].digest) }],
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.message).toBe('dsc_signature_invalid');
    expect(await attemptsLeft(token)).toBe(2);
    const replay = await signerApi(app, 'POST', '/dsc/complete', token, {
      txn,
      signatures: [{ position: 0, signature: tokenSignature(issued.private_key, documents[0].digest) }],
    });
    expect(replay.status).toBe(409);

    const again = (await start(token, issued)).body.data;
    const completed = await signerApi(app, 'POST', '/dsc/complete', token, {
      txn: again.txn,
      signatures: [{ position: 0, signature: tokenSignature(issued.private_key, again.documents[0].digest) }],
    });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect(completed.body.data.session.status).toBe('completed');
    expect(completed.body.data.signer).toMatchObject({
      status: 'completed',
      dsc_transaction: { txn: again.txn, status: 'completed' },
    });

    const details = await rest<any>(app, 'GET', '/esign/details', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    expect(details.body.data.signers[0].name_match).toMatchObject({ status: 'completed', signer_name: 'RAVI KUMAR SHARMA' });
    expect(details.body.data.signers[0].name_match.score).toBeGreaterThanOrEqual(80);
    const pdf = await signedPdf(app, owner, session.client_id);
    await expectSignedByDsc(app, owner, session.client_id, pdf, issued);
  });

  it('refuses certificates that may not sign, each with its own error, counting only the signer’s doing', async () => {
    const ca = createRootCa('Some Untrusted CA', 'Nobody');
    const now = Date.now();
    const untrusted = issueSigningCertificate(
      ca,
      { commonName: 'RAVI KUMAR SHARMA' },
      {
        notBefore: new Date(Math.floor(now / 1000) * 1000 - 3_600_000),
        notAfter: new Date(Math.floor(now / 1000) * 1000 + 86_400_000),
      },
    );
    const cases: [string, () => Promise<{ certificate: string; chain?: string[] }>, string][] = [
      ['dsc_untrusted', async () => ({ certificate: untrusted.certificatePem, chain: [ca.certificatePem] }), 'does not chain'],
      [
        'dsc_expired',
        () => issue({ common_name: 'RAVI KUMAR SHARMA', valid_from: '2020-01-01T00:00:00Z', valid_to: '2022-01-01T00:00:00Z' }),
        'not valid now',
      ],
      ['dsc_no_non_repudiation', () => issue({ common_name: 'RAVI KUMAR SHARMA', non_repudiation: false }), 'non-repudiation'],
      ['dsc_revoked', () => issue({ common_name: 'RAVI KUMAR SHARMA', revoked: true }), 'revoked'],
      ['dsc_name_mismatch', () => issue({ common_name: 'PRIYA NAIR' }), 'does not match'],
    ];
    for (const [code, certificateOf, problem] of cases) {
      const session = await dscSession({}, { max_retry: 3 });
      const token = session.signers[0]!.token;
      const refused = await start(token, await certificateOf());
      expect(refused.status, `${code}: ${JSON.stringify(refused.body)}`).toBe(422);
      expect(refused.body.message).toBe(code);
      expect(refused.body.errors?.[0]).toMatchObject({ field: 'certificate', problem: expect.stringContaining(problem) });
      expect(await attemptsLeft(token), code).toBe(2);
      const audit = await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } });
      expect(audit.status).toBe(200);
      expect(JSON.stringify(audit.body.data)).toContain('dsc_refused');
      expect(JSON.stringify(audit.body.data)).toContain(code);
    }
  });

  it('a pinned certificate: another serial or PAN is refused; the attempts run out and the signer fails', async () => {
    const pinned = await issue({ common_name: 'RAVI KUMAR SHARMA', pan: 'ABCDE1234F' });
    const other = await issue({ common_name: 'RAVI KUMAR SHARMA', pan: 'ZZZZZ9999Z' });
    const bySerial = await dscSession({ dsc_certificate: { serial: pinned.serial.toUpperCase() } });
    const refused = await start(bySerial.signers[0]!.token, other);
    expect(refused.body.message).toBe('dsc_not_pinned');
    expect((await start(bySerial.signers[0]!.token, pinned)).status).toBe(200);

    const byPan = await dscSession({ dsc_certificate: { pan: 'ABCDE1234F' } });
    const token = byPan.signers[0]!.token;
    expect((await start(token, other)).body.message).toBe('dsc_not_pinned');
    const last = await start(token, other);
    expect(last.status).toBe(422);
    const view = (await signerApi(app, 'GET', '/session', token)).body.data;
    expect(view.signer).toMatchObject({ status: 'failed', attempts_left: 0 });
    expect((await start(token, pinned)).status).toBe(409);
  });

  it('refuses malformed bodies with 400, never 500, and an unknown txn with 404', async () => {
    const session = await dscSession();
    const token = session.signers[0]!.token;
    const bodies: unknown[] = [
      {},
      { consent: true },
      { consent: true, certificate: 'not base64!' },
      { consent: true, certificate: 'AAAA' },
      { consent: true, certificate: 'AAAA', chain: 'x' },
      { consent: true, certificate: 'AAAA', chain: [1, 2] },
      { consent: false, certificate: 'AAAA' },
    ];
    for (const body of bodies) {
      const answer = await signerApi(app, 'POST', '/dsc/start', token, body);
      expect([400, 422], JSON.stringify(body)).toContain(answer.status);
    }
    // Not a certificate at all: the signer's doing, counted.
    expect((await signerApi(app, 'POST', '/dsc/start', token, { consent: true, certificate: 'AAAA' })).body.message).toBe(
      'dsc_certificate_invalid',
    );
    for (const body of [
      {},
      { txn: 'dsctxn_x' },
      { txn: `dsctxn_${'0'.repeat(32)}`, signatures: [] },
      { txn: `dsctxn_${'0'.repeat(32)}`, signatures: [{ position: -1, signature: 'AA==' }] },
    ]) {
      expect((await signerApi(app, 'POST', '/dsc/complete', token, body)).status, JSON.stringify(body)).toBe(400);
    }
    const unknown = await signerApi(app, 'POST', '/dsc/complete', token, {
      txn: `dsctxn_${'0'.repeat(32)}`,
      signatures: [{ position: 0, signature: 'AAAA' }],
    });
    expect(unknown.status).toBe(404);
  });

  it('only a DSC signer’s page may reach the bridge; the bridge’s download and help are served', async () => {
    const dsc = await dscSession();
    const suresign = await createSession(app, owner.token, sessionBody(file));
    const csp = async (token: string) => (await fetch(new URL(`/sign/${token}`, app.url))).headers.get('content-security-policy')!;
    expect(await csp(dsc.signers[0]!.token)).toContain("connect-src 'self' http://127.0.0.1:17365;");
    expect(await csp(suresign.signers[0]!.token)).toContain("connect-src 'self';");
    const page = await (await fetch(new URL(`/sign/${dsc.signers[0]!.token}`, app.url))).text();
    expect(page).toContain(`data-download="${app.url}/dsc-bridge/esign-dsc-bridge.zip"`);

    const help = await fetch(new URL('/dsc-bridge', app.url));
    expect(help.status).toBe(200);
    expect(await help.text()).toContain(`--origin ${new URL(app.url).origin}`);
    const zip = await fetch(new URL('/dsc-bridge/esign-dsc-bridge.zip', app.url));
    expect(zip.headers.get('content-type')).toBe('application/zip');
    const listing = await unzipListing(Buffer.from(await zip.arrayBuffer()));
    expect(listing).toEqual(expect.arrayContaining(['esign-dsc-bridge/package.json', 'esign-dsc-bridge/src/main.ts', 'esign-dsc-bridge/src/tokens.ts']));
    expect(listing.some((name) => name.includes('node_modules'))).toBe(false);
  });

  describe.skipIf(!hasSoftHsm)('through a SoftHSM2 token and the bridge', () => {
    let soft: SoftToken;
    let bridge: BridgeProcess;
    let issued: IssuedDsc;

    beforeAll(async () => {
      issued = await issue({ common_name: 'ANITA DESAI', organisation: 'Desai & Co', pan: 'ABCDE1234F' });
      soft = await createSoftToken({
        label: 'ePass2003',
        objects: [{ id: '01', label: 'Signing', privateKeyPem: issued.private_key, certificatePem: issued.certificate }],
      });
      bridge = await startBridge({ modules: [SOFTHSM_MODULE], origins: [new URL(app.url).origin], env: soft.env });
    });
    afterAll(async () => {
      await bridge?.stop();
      await soft?.cleanup();
    });

    it('two signers (DSC, then suresign): the token signs through PKCS#11 after its PIN, the document reaches B-LTA', async () => {
      const origin = new URL(app.url).origin;
      const session = await createSession(
        app,
        owner.token,
        sessionBody(file, {
          signers: [
            signerInput({ full_name: 'Anita Desai', sign_type: 'dsc', elements: [signatureAt(0, 72, 640)] }),
            signerInput({ full_name: 'Esign Platform', sign_type: 'suresign', elements: [signatureAt(0, 72, 500)] }),
          ],
        }),
      );
      const [dsc, platform] = session.signers;
      const listed = await fetch(`${bridge.url}/v1/certificates`, { headers: { origin } });
      const { certificates } = (await listed.json()) as { certificates: { id: string; certificate: string }[] };
      expect(certificates).toHaveLength(1);
      expect(certificates[0]!.certificate).toBe(der(issued.certificate));

      const started = await signerApi(app, 'POST', '/dsc/start', dsc!.token, {
        consent: true,
        certificate: certificates[0]!.certificate,
      });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const [document] = started.body.data.documents;
      const request = await fetch(`${bridge.url}/v1/sign`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json' },
        body: JSON.stringify({
          certificate_id: certificates[0]!.id,
          digest: document.digest,
          digest_algorithm: 'sha-256',
          description: document.description,
        }),
      });
      expect(request.status).toBe(202);
      const { request_id, approve_url } = (await request.json()) as { request_id: string; approve_url: string };
      // A wrong PIN first: the token refuses it, the bridge asks again, the service counts nothing.
      const wrongPin = await approveInBridge(approve_url, '0000');
      expect(wrongPin.html).toMatch(/wrong PIN/i);
      expect(await attemptsLeft(dsc!.token)).toBe(3);
      await approveInBridge(approve_url, soft.pin);
      const answer = await waitForBridgeSignature(bridge, origin, request_id);
      expect(answer.status, JSON.stringify(answer)).toBe('signed');

      const completed = await signerApi(app, 'POST', '/dsc/complete', dsc!.token, {
        txn: started.body.data.txn,
        signatures: [{ position: 0, signature: answer.signature }],
      });
      expect(completed.status, JSON.stringify(completed.body)).toBe(200);
      expect(completed.body.data.session.status).toBe('pending');
      expect((await signerApi(app, 'POST', '/sign', platform!.token, { consent: true })).status).toBe(200);

      const pdf = await signedPdf(app, owner, session.client_id);
      await expectSignedByDsc(app, owner, session.client_id, pdf, issued);
    });

    it('the token pulled out mid-sign: nothing is signed, no attempt is lost, the signer starts again', async () => {
      const origin = new URL(app.url).origin;
      const pulled = await issue({ common_name: 'ANITA DESAI' });
      const token2 = await createSoftToken({
        label: 'ProxKey',
        objects: [{ id: '02', label: 'Signing', privateKeyPem: pulled.private_key, certificatePem: pulled.certificate }],
      });
      const second = await startBridge({ modules: [SOFTHSM_MODULE], origins: [origin], env: token2.env });
      try {
        const session = await dscSession({ full_name: 'Anita Desai' });
        const signerToken = session.signers[0]!.token;
        const { certificates } = (await (await fetch(`${second.url}/v1/certificates`, { headers: { origin } })).json()) as {
          certificates: { id: string; certificate: string }[];
        };
        const started = (await signerApi(app, 'POST', '/dsc/start', signerToken, { consent: true, certificate: certificates[0]!.certificate }))
          .body.data;
        const request = (await (
          await fetch(`${second.url}/v1/sign`, {
            method: 'POST',
            headers: { origin, 'content-type': 'application/json' },
            body: JSON.stringify({
              certificate_id: certificates[0]!.id,
              digest: started.documents[0].digest,
              digest_algorithm: 'sha-256',
              description: started.documents[0].description,
            }),
          })
        ).json()) as { request_id: string; approve_url: string };
        await token2.remove();
        await approveInBridge(request.approve_url, token2.pin);
        const answer = await waitForBridgeSignature(second, origin, request.request_id);
        expect(answer).toMatchObject({ status: 'refused', error: { code: 'token_removed' } });
        const view = (await signerApi(app, 'GET', '/session', signerToken)).body.data.signer;
        expect(view).toMatchObject({ status: 'pending', attempts_left: 2, dsc_transaction: { txn: started.txn, status: 'pending' } });
        // Plugged in again (here: the same key on a new token), the signer starts again and signs.
        const again = (await start(signerToken, pulled)).body.data;
        const done = await signerApi(app, 'POST', '/dsc/complete', signerToken, {
          txn: again.txn,
          signatures: [{ position: 0, signature: tokenSignature(pulled.private_key, again.documents[0].digest) }],
        });
        expect(done.status, JSON.stringify(done.body)).toBe(200);
        expect(done.body.data.session.status).toBe('completed');
        const stale = await signerApi(app, 'POST', '/dsc/complete', signerToken, {
          txn: started.txn,
          signatures: [{ position: 0, signature: tokenSignature(pulled.private_key, started.documents[0].digest) }],
        });
        expect(stale.status).toBe(409);
      } finally {
        await second.stop();
        await token2.cleanup();
      }
    });
  });
});

async function signedPdf(app: TestApp, owner: TestUser, clientId: string): Promise<Buffer> {
  const link = await rest<any>(app, 'GET', '/esign/download-pdf', { token: owner.token, query: { client_id: clientId } });
  expect(link.status, JSON.stringify(link.body)).toBe(200);
  return Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
}

/**
 * The DSC's signature in the completed PDF stands on its own: the service's verify report (B-LTA, good revocation
 * from the DSC CA's OCSP, chain valid), the in-process CMS check, pdfsig, `qpdf --check`, and `openssl cms -verify`
 * of the CMS over the bytes its ByteRange covers, against the sandbox root.
 */
async function expectSignedByDsc(app: TestApp, owner: TestUser, clientId: string, pdf: Buffer, issued: IssuedDsc) {
  const report = (await rest<any>(app, 'GET', '/esign/verify', { token: owner.token, query: { client_id: clientId } })).body.data;
  expect(report.all_valid, JSON.stringify(report.signatures.map((s: any) => s.problems))).toBe(true);
  const dscSignature = report.signatures.find((s: any) =>
    String(s.signer_subject ?? '').includes(
      new X509Certificate(issued.certificate).subject
        .split('\n')
        .find((l) => l.startsWith('CN='))!
        .slice(3),
    ),
  );
  expect(dscSignature, JSON.stringify(report.signatures.map((s: any) => s.signer_subject))).toBeDefined();
  expect(dscSignature).toMatchObject({ pades_level: 'B-LTA', certificate_chain_valid: true, revocation: { status: 'good' } });
  expect(await longTermTailProblems(pdf)).toEqual([]);

  const signatures = await signaturesOf(pdf);
  const fromToken = signatures.find((signature) => signature.cms.includes(new X509Certificate(issued.certificate).raw));
  expect(fromToken).toBeDefined();
  expect(fromToken!.verification).toMatchObject({ signatureValid: true, digestValid: true });

  if (hasPdfsig) {
    const entries = pdfsigReport(pdf).filter((entry) => entry.kind === 'signature');
    expect(entries.length).toBeGreaterThanOrEqual(1);
    for (const entry of entries) expect(entry.valid, JSON.stringify(entry)).toBe(true);
  } else console.warn('pdfsig is not installed: the DSC signature was not checked by poppler');
  if (hasQpdf) qpdfCheck(pdf);
  else console.warn('qpdf is not installed: qpdf --check was not run on the DSC-signed PDF');
  if (hasOpenssl) {
    const [a, b, c, d] = fromToken!.byteRange;
    const covered = Buffer.concat([pdf.subarray(a, a + b), pdf.subarray(c, c + d)]);
    const root = issued.chain[issued.chain.length - 1]!;
    const end = derLength(fromToken!.cms);
    const verified = await openssl(
      [
        'cms',
        '-verify',
        '-binary',
        '-inform',
        'DER',
        '-in',
        'sig.der',
        '-content',
        'data.bin',
        '-CAfile',
        'root.pem',
        '-purpose',
        'any',
        '-out',
        '/dev/null',
      ],
      { 'sig.der': fromToken!.cms.subarray(0, end), 'data.bin': covered, 'root.pem': root },
    );
    expect(verified.status, verified.output).toBe(0);
    expect(verified.output).toMatch(/Verification successful/);
  } else console.warn('openssl is not installed: openssl cms -verify was not run on the DSC signature');
}

/** The names in a ZIP, as Info-ZIP's `unzip -Z1` lists them. */
async function unzipListing(zip: Buffer): Promise<string[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bridge-zip-'));
  try {
    await writeFile(path.join(dir, 'bridge.zip'), zip);
    const listed = spawnSync('unzip', ['-Z1', path.join(dir, 'bridge.zip')], { encoding: 'utf8' });
    expect(listed.status, listed.stderr).toBe(0);
    return listed.stdout.split('\n').filter((line) => line !== '');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The DER length of the CMS at the start of /Contents (the zero padding after it is not part of it). */
function derLength(bytes: Buffer): number {
  const first = bytes[1]!;
  if (first < 0x80) return 2 + first;
  const count = first & 0x7f;
  let length = 0;
  for (let i = 0; i < count; i++) length = length * 256 + bytes[2 + i]!;
  return 2 + count + length;
}
