import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPkcs12 } from '../../src/platform/crypto/pkcs12';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signAsAadhaar, signerInput, throughEsp, uploadPdf } from '../helpers/factories';
import { signaturesOf } from '../helpers/pdf-signatures';
import { ROOT, startServiceProcess, type ServiceProcess } from '../helpers/process';
import { makePkcs12 } from '../helpers/pfx';

/**
 * The sandbox ESP run alone (`npm run sandbox-esp`: its own process and port), and the service pointed at it as at
 * any ESP: `ESP_<NAME>_*` with the ASP's own PKCS#12 and the certificate the gateway printed. Nothing is shared
 * but HTTP.
 */
describe('the standalone sandbox ESP, configured as an ESP backend', () => {
  let gateway: ServiceProcess;
  let app: TestApp;
  let owner: TestUser;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'esp-standalone-'));
    const aspPfx = makePkcs12({ password: 'asp-secret', commonName: 'Test ASP Pvt Ltd' });
    writeFileSync(path.join(dir, 'asp.p12'), aspPfx);
    const aspCertificate = openPkcs12(aspPfx, 'asp-secret').certificatePem;
    gateway = startServiceProcess(
      { SANDBOX_ESP_PORT: '0', SANDBOX_ESP_ASP_CERTS: aspCertificate, SANDBOX_ESP_STATE_SECRET: 'standalone-test-secret' },
      path.join(ROOT, 'dist/src/sandbox-esp.js'),
    );
    const started = await gateway.waitForLine(/Sandbox ESP gateway on http:\/\/127\.0\.0\.1:\d+\//);
    const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(started)![1]!;
    // The last certificate it printed signs its responses (node-forge writes PEM with CRLF).
    await gateway.waitForLine(/EsignResp are signed with/);
    while (gateway.stdout.filter((line) => /^-----END CERTIFICATE-----\r?$/.test(line)).length < 2) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const printed = gateway.stdout.join('\n');
    const responseCertificate = printed
      .slice(printed.indexOf('EsignResp are signed with'))
      .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/)![0];
    app = await startTestApp({
      env: {
        ESP_STANDALONE_URL: url,
        ESP_STANDALONE_CERT: responseCertificate,
        ESP_STANDALONE_ASP_ID: 'TEST-ASP',
        ESP_STANDALONE_ASP_PFX: path.join(dir, 'asp.p12'),
        ESP_STANDALONE_ASP_PFX_PASSWORD: 'asp-secret',
        // The same gateway spoken to in 3.2: the request from this server, the signer sent to its /authpage.
        ESP_STANDALONE32_URL: url,
        ESP_STANDALONE32_VERSION: '3.2',
        ESP_STANDALONE32_AUTH_URL: `${url}authpage`,
        ESP_STANDALONE32_CERT: responseCertificate,
        ESP_STANDALONE32_ASP_ID: 'TEST-ASP',
        ESP_STANDALONE32_ASP_PFX: path.join(dir, 'asp.p12'),
        ESP_STANDALONE32_ASP_PFX_PASSWORD: 'asp-secret',
      },
    });
    owner = await app.createUser();
  });
  afterAll(async () => {
    await app?.close();
    gateway?.child.kill('SIGTERM');
    await gateway?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['standalone', 'standalone32'])('signs an Aadhaar signer through it, over HTTP only (backend %s)', async (backend) => {
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { sign_type: 'aadhaar', backend, signers: [signerInput({ full_name: 'Asha Rao' })] }),
    );
    expect(session.backend).toBe(backend);
    const token = session.signers[0]!.token as string;
    if (backend === 'standalone32') {
      // Acknowledged to this server: the browser is handed only txnref, for the gateway's authentication page.
      const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      expect(started.body.data.esp_url).toMatch(/\/authpage$/);
      expect(Object.keys(started.body.data.fields)).toEqual(['txnref']);
      const { last } = await throughEsp(started.body.data.esp_url, started.body.data.fields, { authMode: 1 });
      expect(last.status).toBe(303);
      expect(last.location).toContain(`/sign/return?txn=${started.body.data.txn}&txnref=`);
    } else {
      const signed = await signAsAadhaar(app, token);
      expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    }
    const read = (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } }))
      .body.data;
    expect(read.status).toBe('completed');
    expect(read.signers[0].aadhaar_cert_details.name).toBe('Asha Rao');
    const link = await rest<any>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    const pdf = Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
    const [signature] = await signaturesOf(pdf);
    expect(signature!.verification.digestValid && signature!.verification.signatureValid).toBe(true);
    expect(signature!.verification.signerSubject).toContain('CN=Asha Rao');
  });

  it('a session on the built-in sandbox is untouched, and an unknown backend is 400', async () => {
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(app, owner.token, sessionBody(file, { sign_type: 'aadhaar' }));
    expect(session.backend).toBe('sandbox');
    const unknown = await rest<any>(app, 'POST', '/esign/initialize-esign', {
      token: owner.token,
      json: sessionBody(file, { sign_type: 'aadhaar', backend: 'emudhra' }),
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ field: 'backend', problem: 'must be one of standalone, standalone32, sandbox' }]);
  });
});
