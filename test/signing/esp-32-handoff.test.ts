import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EspTransaction } from '../../src/modules/signer-journey/aadhaar/esp-transaction.entity';
import { aadhaarSubject } from '../../src/modules/signing/aadhaar-certificate';
import { createRootCa, issueSigningCertificate, type KeyAndCertificate } from '../../src/modules/signing/certificates';
import { signDetachedCmsOverDigest } from '../../src/modules/signing/cms-sign';
import { buildEsignAcknowledgement } from '../../src/modules/signing/esp/cca/esign-ack';
import { parseAndVerifyEsignRequest } from '../../src/modules/signing/esp/cca/esign-request';
import { buildEsignResponse } from '../../src/modules/signing/esp/cca/esign-response';
import { openPkcs12 } from '../../src/platform/crypto/pkcs12';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { signaturesOf } from '../helpers/pdf-signatures';
import { makePkcs12 } from '../helpers/pfx';

/**
 * eSign 3.2 with an ESP we did not write: a real HTTP server in the test plays a 3.x ESP's gateway (the server-to-
 * server request, its acknowledgement, the authentication page, the final response POSTed as raw XML), and
 * misbehaves on demand: refuses, answers unsigned or foreign-signed acknowledgements, an error status, or nothing.
 */
describe('eSign 3.2: the request from this server, the acknowledgement, the final response to responseUrl', () => {
  type Mode = 'accept' | 'refuse' | 'unsigned' | 'foreign' | 'other-txn' | 'garbage' | 'http500' | 'silent';
  let mode: Mode = 'accept';
  let app: TestApp;
  let owner: TestUser;
  let file: string;
  let dir: string;
  let esp: KeyAndCertificate;
  let espCa: KeyAndCertificate;
  let aspCertificatePem: string;
  let server: ReturnType<express.Express['listen']>;
  let espUrl: string;
  /** What the ESP received: each request's content type and body. */
  const requests: { contentType: string; xml: string }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'esp32-'));
    esp = createRootCa('A 3.x ESP response signing', 'Some ESP');
    espCa = createRootCa('A 3.x ESP CA', 'Some ESP');
    const stranger = createRootCa('Not the ESP', 'Elsewhere');
    const aspPfx = makePkcs12({ password: 'asp-secret', commonName: 'Test ASP Pvt Ltd' });
    writeFileSync(path.join(dir, 'asp.p12'), aspPfx);
    aspCertificatePem = openPkcs12(aspPfx, 'asp-secret').certificatePem;

    const fake = express();
    fake.post('/esign', express.text({ type: () => true, limit: '1mb' }), (req, res) => {
      const xml = String(req.body);
      requests.push({ contentType: String(req.headers['content-type']), xml });
      const txn = /\btxn="([^"]+)"/.exec(xml)?.[1] ?? 'unknown';
      const ack = (signer: KeyAndCertificate, forTxn = txn) =>
        buildEsignAcknowledgement({ version: '3.2', txn: forTxn, resCode: 'RES-1', signer, status: 'accepted' });
      const send = (body: string) => res.type('application/xml').send(body);
      if (mode === 'accept') return send(ack(esp));
      if (mode === 'refuse')
        return send(
          buildEsignAcknowledgement({
            version: '3.2',
            txn,
            resCode: 'RES-0',
            signer: esp,
            status: 'refused',
            errCode: 'ESP-101',
            errMsg: 'ASP not enabled for this service',
          }),
        );
      if (mode === 'unsigned')
        return send(`<EsignResp ver="3.2" status="2" ts="2026-01-01T10:00:00" txn="${txn}" resCode="RES-1"/>`);
      if (mode === 'foreign') return send(ack(stranger));
      if (mode === 'other-txn') return send(ack(esp, 'esptxn_someone_else'));
      if (mode === 'garbage') return send('hello');
      if (mode === 'http500') return res.status(500).send('<error/>');
      // silent: never answers; the connection is closed when the server closes
    });
    fake.all('/authpage', (_req, res) => res.type('html').send('<h1>The ESP authenticates its account holder here</h1>'));
    server = fake.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    espUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    app = await startTestApp({
      env: {
        ESP_SOMEESP_URL: `${espUrl}/esign`,
        ESP_SOMEESP_AUTH_URL: `${espUrl}/authpage`,
        ESP_SOMEESP_VERSION: '3.2',
        ESP_SOMEESP_CERT: esp.certificatePem,
        ESP_SOMEESP_ASP_ID: 'TEST-ASP',
        ESP_SOMEESP_ASP_PFX: path.join(dir, 'asp.p12'),
        ESP_SOMEESP_ASP_PFX_PASSWORD: 'asp-secret',
        ESP_SOMEESP_ACK_TIMEOUT_SECONDS: '2',
        // Failures in a row are this file's subject: none may make the ESP skipped (esp-failover.test.ts tests that).
        ESP_FAILURES_BEFORE_SKIP: '100',
      },
    });
    owner = await app.createUser();
    file = await uploadPdf(app, owner.token);
  });
  afterAll(async () => {
    await app?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    mode = 'accept';
  });

  const session = async () => {
    const created = await createSession(
      app,
      owner.token,
      sessionBody(file, { sign_type: 'aadhaar', backend: 'someesp', signers: [signerInput({ full_name: 'Asha Rao' })] }),
    );
    return { clientId: created.client_id, token: created.signers[0]!.token as string };
  };
  const audit = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: clientId } })).body.data.events as {
      event: string;
      details: any;
    }[];
  const view = async (token: string) => (await signerApi(app, 'GET', '/session', token)).body.data.signer;
  const postToResponseUrl = (xml: string) =>
    fetch(`${app.services.config.publicUrl}/esp/response/someesp`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: xml,
    });

  it('acknowledged: the browser goes to the ESP’s page with txnref; the signed final response, POSTed as raw XML, signs', async () => {
    const { clientId, token } = await session();
    const before = requests.length;
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const { txn, esp_url: authUrl, fields } = started.body.data;
    expect(authUrl).toBe(`${espUrl}/authpage`);
    expect(Object.keys(fields)).toEqual(['txnref']);
    expect(Buffer.from(fields.txnref, 'base64').toString()).toBe(`${txn}|RES-1`);

    // The request went from this server, as XML, signed by the ASP's key.
    expect(requests.length).toBe(before + 1);
    const sent = requests.at(-1)!;
    expect(sent.contentType).toMatch(/^application\/xml/);
    const request = parseAndVerifyEsignRequest(sent.xml, aspCertificatePem);
    expect(request).toMatchObject({
      ver: '3.2',
      txn,
      aspId: 'TEST-ASP',
      responseUrl: `${app.services.config.publicUrl}/esp/response/someesp`,
      redirectUrl: `${app.services.config.publicUrl}/sign/return?txn=${txn}`,
    });
    // docUrl: the prepared PDF, by a signed link; its signature range hashes to the InputHash.
    const [document] = request.documents;
    expect(document!.docUrl).toMatch(/^http:\/\/.+\/downloads\/.+/);
    const fetched = await fetch(document!.docUrl!);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('application/pdf');
    const pdf = Buffer.from(await fetched.arrayBuffer());
    const row = await app.services.orm.em.fork().findOneOrFail(EspTransaction, { txn });
    const rangeHash = createHash('sha256')
      .update(pdf.subarray(0, row.documents[0]!.contents_at))
      .update(pdf.subarray(row.documents[0]!.contents_end))
      .digest('hex');
    expect(rangeHash).toBe(document!.sha256Hex);
    expect(row.responseCode).toBe('RES-1');
    const tampered = document!.docUrl!.replace(/.$/, (last) => (last === 'A' ? 'B' : 'A'));
    expect((await fetch(tampered)).status).toBe(403);

    expect((await view(token)).esp_transaction).toMatchObject({ txn, status: 'pending' });
    expect((await audit(clientId)).find((event) => event.event === 'esp_acknowledged')?.details).toEqual({
      backend: 'someesp',
      txn,
      res_code: 'RES-1',
    });

    // An acknowledgement is not a response: POSTed to responseUrl, it is refused and changes nothing.
    const ackAsResponse = await postToResponseUrl(
      buildEsignAcknowledgement({ version: '3.2', txn, resCode: 'RES-1', signer: esp, status: 'accepted' }),
    );
    expect(ackAsResponse.status).toBe(400);
    expect((await view(token)).esp_transaction.status).toBe('pending');

    // The ESP authenticated its account holder and POSTs the final response to responseUrl itself.
    const now = Date.now();
    const holder = issueSigningCertificate(
      espCa,
      aadhaarSubject({
        name: 'Asha Rao',
        state: 'Karnataka',
        pinCode: '560001',
        yearOfBirth: '1988',
        gender: 'F',
        aadhaarLast4: '2346',
      }),
      { notBefore: new Date(now - 60_000), notAfter: new Date(now + 30 * 60_000) },
    );
    const cms = signDetachedCmsOverDigest(Buffer.from(document!.sha256Hex, 'hex'), {
      privateKeyPem: holder.privateKeyPem,
      certificatePem: holder.certificatePem,
      chainPems: [espCa.certificatePem],
    });
    const final = await postToResponseUrl(
      buildEsignResponse({
        version: '3.2',
        txn,
        resCode: 'RES-1',
        signer: esp,
        status: 'success',
        userCertificatePem: holder.certificatePem,
        signatures: [{ id: '1', cms }],
      }),
    );
    expect(final.status).toBe(200);
    const read = (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body
      .data;
    expect(read.status).toBe('completed');
    const link = await rest<any>(app, 'GET', '/esign/download-pdf', { token: owner.token, query: { client_id: clientId } });
    const [signature] = await signaturesOf(Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer()));
    expect(signature!.verification.digestValid && signature!.verification.signatureValid).toBe(true);
    expect(signature!.verification.signerSubject).toContain('CN=Asha Rao');
    // The document link lapsed with the transaction: its bytes are gone.
    expect((await fetch(document!.docUrl!)).status).toBe(404);
  });

  it('an ESP that refuses in its acknowledgement fails the transaction with its errCode and errMsg, costing no attempt', async () => {
    const { clientId, token } = await session();
    const attemptsBefore = (await view(token)).attempts_left;
    mode = 'refuse';
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.status).toBe(503);
    expect(started.body.message).toContain('ASP not enabled for this service');
    expect(started.body.errors).toEqual([{ field: 'esp', problem: 'ESP-101: ASP not enabled for this service' }]);
    const signer = await view(token);
    expect(signer.esp_transaction).toMatchObject({
      status: 'failed',
      error_code: 'ESP-101',
      error_message: 'ASP not enabled for this service',
    });
    expect(signer.attempts_left).toBe(attemptsBefore);
    expect(signer.status).toBe('pending');
    const failed = (await audit(clientId)).filter((event) => event.event === 'esp_failed');
    expect(failed.at(-1)?.details).toMatchObject({ error_code: 'ESP-101', attempts_left: attemptsBefore });
    // Nothing stays open: the signer may start again at once.
    mode = 'accept';
    expect((await signerApi(app, 'POST', '/esp/start', token, { consent: true })).status).toBe(200);
  });

  it.each([
    ['unsigned', 'esp_ack_invalid', /the XML is not signed/],
    ['foreign', 'esp_ack_invalid', /signature/i],
    ['other-txn', 'esp_ack_invalid', /names transaction esptxn_someone_else/],
    ['garbage', 'esp_ack_invalid', /./],
    ['http500', 'esp_unreachable', /answered HTTP 500/],
  ] as const)('an acknowledgement that is %s is refused: 503, %s, no attempt counted, never a 500', async (which, code, why) => {
    const { token } = await session();
    const attemptsBefore = (await view(token)).attempts_left;
    mode = which;
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.status, JSON.stringify(started.body)).toBe(503);
    expect(started.body.errors![0]!.field).toBe('esp');
    expect(started.body.errors![0]!.problem).toMatch(new RegExp(`^${code}: `));
    const signer = await view(token);
    expect(signer.esp_transaction).toMatchObject({ status: 'failed', error_code: code });
    expect(signer.esp_transaction.error_message).toMatch(why);
    expect(signer.attempts_left).toBe(attemptsBefore);
  });

  it('an ESP that never answers the server-to-server call: the start ends after the acknowledgement timeout', async () => {
    const { token } = await session();
    mode = 'silent';
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.status).toBe(503);
    expect(started.body.errors).toEqual([
      {
        field: 'esp',
        problem: 'esp_unreachable: the eSign Service Provider did not acknowledge the request within 2 s',
      },
    ]);
    const signer = await view(token);
    expect(signer.esp_transaction).toMatchObject({ status: 'failed', error_code: 'esp_unreachable' });
    // The prepared bytes went with the transaction.
    const row = await app.services.orm.em.fork().findOneOrFail(EspTransaction, { txn: signer.esp_transaction.txn });
    expect(await app.services.blobs.stat(row.documents[0]!.prepared_key)).toBeFalsy();
  });
});
