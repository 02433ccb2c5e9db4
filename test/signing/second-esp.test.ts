import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRootCa,
  issueSigningCertificate,
  randomSerialNumber,
  type KeyAndCertificate,
} from '../../src/modules/signing/certificates';
import { signDetachedCmsOverDigest } from '../../src/modules/signing/cms-sign';
import { parseAndVerifyEsignRequest } from '../../src/modules/signing/esp/cca/esign-request';
import { buildEsignResponse } from '../../src/modules/signing/esp/cca/esign-response';
import { openPkcs12 } from '../../src/platform/crypto/pkcs12';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { createSession, formOf, postForm, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { signaturesOf } from '../helpers/pdf-signatures';
import { makePkcs12 } from '../helpers/pfx';

/**
 * A second ESP, one this service did not write: an HTTP server in the test speaking the CCA eSign API 2.1 with
 * its own CA, and an eSign certificate subject laid out its own way (C, ST, postalCode, pseudonym, serialNumber,
 * description, CN; no O). The service is pointed at it as at any ESP (`ESP_SECOND_*`), and a signer signs through
 * it over the signer API; the ESP's answer comes back in each form ESPs use, and in forms they do not.
 */

/** The ESP's subject, as [attribute short name or OID, value], most general first. */
type Subject = [string, string][];

const UNIQUE_ID = 'c2a5d0f4'.repeat(8); // pseudonym: the ESP's unique id of the holder (a hash, never the number)
const SECOND_ESP_SUBJECT: Subject = [
  ['C', 'IN'],
  ['ST', 'Maharashtra'],
  ['postalCode', '411001'],
  ['2.5.4.65', UNIQUE_ID],
  ['serialNumber', 'XXXXXXXX4566'],
  ['2.5.4.13', 'YOB:1979 Gender:M'],
  ['CN', 'Vikram Singh'],
];

const OIDS: Record<string, string> = {
  C: '2.5.4.6',
  ST: '2.5.4.8',
  postalCode: '2.5.4.17',
  serialNumber: '2.5.4.5',
  CN: '2.5.4.3',
};

/** The holder's certificate as the second ESP's CA issues it (its own code: node-forge, any subject, even no CN). */
function issueHolderCertificate(ca: KeyAndCertificate, subject: Subject): KeyAndCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = randomSerialNumber();
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 30 * 60_000);
  cert.setSubject(
    subject.map(([name, value]) => ({
      type: OIDS[name] ?? name,
      value,
      valueTagClass: (name === 'C' || name === 'serialNumber'
        ? forge.asn1.Type.PRINTABLESTRING
        : forge.asn1.Type.UTF8) as number as forge.asn1.Class,
    })),
  );
  cert.setIssuer(forge.pki.certificateFromPem(ca.certificatePem).subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, critical: true },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(ca.privateKeyPem), forge.md.sha256.create());
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certificatePem: forge.pki.certificateToPem(cert),
  };
}

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

describe('a second ESP (CCA eSign 2.1, its own CA and certificate layout)', () => {
  let app: TestApp;
  let owner: TestUser;
  let file: string;
  let esp: ReturnType<express.Express['listen']>;
  let dir: string;
  /** The subject the ESP writes into the next certificate it issues. */
  let nextSubject: Subject = SECOND_ESP_SUBJECT;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'second-esp-'));
    const aspPfx = makePkcs12({ password: 'asp-secret', commonName: 'Test ASP Pvt Ltd' });
    writeFileSync(path.join(dir, 'asp.p12'), aspPfx);
    const aspCertificate = openPkcs12(aspPfx, 'asp-secret').certificatePem;
    const ca = createRootCa('Second ESP eKYC Sub-CA 2026', 'Second ESP Ltd');
    const responder = issueSigningCertificate(
      ca,
      { commonName: 'Second ESP response signer', organization: 'Second ESP Ltd', country: 'IN' },
      { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000) },
    );

    // The ESP: the request is verified against the ASP's certificate; the holder is taken as authenticated (its
    // pages are not what is tested here); the answer is the auto-submitted form of eSign 2.1.
    const espApp = express();
    espApp.post('/esign/2.1/signdoc', express.urlencoded({ extended: false, limit: '1mb' }), (req, res) => {
      const request = parseAndVerifyEsignRequest(String(req.body.eSignRequest), aspCertificate);
      const holder = issueHolderCertificate(ca, nextSubject);
      const identity = { ...holder, chainPems: [ca.certificatePem] };
      const resCode = randomUUID();
      const xml = buildEsignResponse({
        version: '2.1',
        txn: request.txn,
        resCode,
        signer: responder,
        status: 'success',
        userCertificatePem: holder.certificatePem,
        signatures: request.documents.map((document) => ({
          id: document.id,
          cms: signDetachedCmsOverDigest(Buffer.from(document.sha256Hex, 'hex'), identity),
          error: '',
        })),
      });
      res.type('html').send(`<!doctype html><form method="post" action="${escapeHtml(request.responseUrl)}">
<input type="hidden" name="eSignResponse" value="${escapeHtml(xml)}">
<input type="hidden" name="espTxnID" value="${escapeHtml(resCode)}">
</form>`);
    });
    esp = espApp.listen(0, '127.0.0.1');
    await new Promise((resolve) => esp.once('listening', resolve));

    app = await startTestApp({
      env: {
        ESP_SECOND_URL: `http://127.0.0.1:${(esp.address() as AddressInfo).port}/esign/2.1/signdoc`,
        ESP_SECOND_CERT: responder.certificatePem,
        ESP_SECOND_ASP_ID: 'TEST-ASP',
        ESP_SECOND_ASP_PFX: path.join(dir, 'asp.p12'),
        ESP_SECOND_ASP_PFX_PASSWORD: 'asp-secret',
      },
    });
    owner = await app.createUser();
    file = await uploadPdf(app, owner.token);
  });
  afterAll(async () => {
    await app?.close();
    await new Promise((resolve) => esp?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const details = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data;
  const audit = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: clientId } })).body.data.events as {
      event: string;
      details: any;
    }[];

  /** An Aadhaar session on the second ESP, its signer at the ESP: the form the ESP answered, not yet posted back. */
  async function atTheEsp(signer: Record<string, unknown> = {}, subject: Subject = SECOND_ESP_SUBJECT) {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { sign_type: 'aadhaar', backend: 'second', signers: [signerInput(signer)] }),
    );
    const token = session.signers[0]!.token;
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    nextSubject = subject;
    const entry = await postForm(started.body.data.esp_url, started.body.data.fields);
    expect(entry.status, entry.html).toBe(200);
    const back = formOf(entry.html, entry.url);
    return { clientId: session.client_id, token, txn: started.body.data.txn as string, back, xml: back.fields.eSignResponse! };
  }

  const transactionStatus = async (txn: string) =>
    (
      (
        await app.services.orm.em.fork().getConnection().execute('select status from esp_transactions where txn = ?', [txn])
      )[0] as {
        status: string;
      }
    ).status;

  describe('reads its certificate for what it carries', () => {
    it('fills aadhaar_cert_details from its layout and scores the name match on CN, over both faces', async () => {
      const { clientId, back } = await atTheEsp({ full_name: 'Shri Vikram Singh', name_match: true });
      const delivered = await postForm(back.action, back.fields);
      expect(delivered.status, delivered.html).toBe(303);

      const read = await details(clientId);
      expect(read.status).toBe('completed');
      expect(read.signers[0].aadhaar_cert_details).toEqual({
        name: 'Vikram Singh',
        country: 'IN',
        state: 'Maharashtra',
        pin_code: '411001',
        aadhaar: 'XXXXXXXX4566',
        year_of_birth: '1979',
        gender: 'M',
      });
      expect(read.signers[0].name_match).toEqual({
        enforce: true,
        prefill_name: 'Shri Vikram Singh',
        signer_name: 'Vikram Singh',
        score: 100,
        status: 'completed',
      });
      // The ESP's unique id of the holder is not taken for anything.
      expect(JSON.stringify(read)).not.toContain(UNIQUE_ID);

      const graphql = await fetch(new URL('/graphql', app.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
        body: JSON.stringify({
          query: `query ($id: String!) { esignSession(client_id: $id) { signers { aadhaar_cert_details { name state pin_code aadhaar year_of_birth gender } name_match { status score } } } }`,
          variables: { id: clientId },
        }),
      }).then((response) => response.json() as Promise<any>);
      expect(graphql.errors).toBeUndefined();
      expect(graphql.data.esignSession.signers[0]).toEqual({
        aadhaar_cert_details: {
          name: 'Vikram Singh',
          state: 'Maharashtra',
          pin_code: '411001',
          aadhaar: 'XXXXXXXX4566',
          year_of_birth: '1979',
          gender: 'M',
        },
        name_match: { status: 'completed', score: 100 },
      });

      const link = await rest<any>(app, 'GET', '/esign/download-pdf', { token: owner.token, query: { client_id: clientId } });
      const pdf = Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
      const [signature] = await signaturesOf(pdf);
      expect(signature!.verification.digestValid && signature!.verification.signatureValid).toBe(true);
      expect(signature!.verification.signerSubject).toContain('CN=Vikram Singh');
    });

    it('a certificate that carries less: what it lacks is null, and with no CN the name match is unavailable, not pending', async () => {
      const bare: Subject = [
        ['C', 'IN'],
        ['ST', 'Goa'],
        ['2.5.4.65', UNIQUE_ID],
        ['serialNumber', 'F'.repeat(64)],
      ];
      const { clientId, back } = await atTheEsp({ full_name: 'Zoë Dsouza', name_match: true }, bare);
      expect((await postForm(back.action, back.fields)).status).toBe(303);
      const read = await details(clientId);
      expect(read.status).toBe('completed');
      expect(read.signers[0].status).toBe('completed');
      expect(read.signers[0].aadhaar_cert_details).toEqual({
        name: null,
        country: 'IN',
        state: 'Goa',
        pin_code: null,
        aadhaar: null,
        year_of_birth: null,
        gender: null,
      });
      expect(read.signers[0].name_match).toEqual({
        enforce: true,
        prefill_name: 'Zoë Dsouza',
        signer_name: null,
        score: null,
        status: 'unavailable',
      });
    });

    it('without name_match requested, the details are still read and the match stays skipped', async () => {
      const { clientId, back } = await atTheEsp({ full_name: 'Vikram Singh' });
      expect((await postForm(back.action, back.fields)).status).toBe(303);
      const read = await details(clientId);
      expect(read.signers[0].aadhaar_cert_details.name).toBe('Vikram Singh');
      expect(read.signers[0].name_match.status).toBe('skipped');
    });
  });

  describe('takes its response in the forms ESPs send it', () => {
    const forms: [string, (xml: string, espTxnID: string) => RequestInit, number][] = [
      [
        'a form field eSignResponse (the XML)',
        (xml, id) => ({
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ eSignResponse: xml, espTxnID: id }),
        }),
        303,
      ],
      [
        'a form field eSignResponse (its base64)',
        (xml) => ({
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ eSignResponse: Buffer.from(xml).toString('base64') }),
        }),
        303,
      ],
      [
        'a form field msg',
        (xml) => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ msg: xml }) }),
        303,
      ],
      ['the XML as the body, application/xml', (xml) => ({ headers: { 'content-type': 'application/xml' }, body: xml }), 200],
      ['the XML as the body, text/xml', (xml) => ({ headers: { 'content-type': 'text/xml; charset=utf-8' }, body: xml }), 200],
    ];

    it.each(forms)('%s', async (_form, request, status) => {
      const { clientId, txn, back, xml } = await atTheEsp();
      const answer = await fetch(back.action, { method: 'POST', redirect: 'manual', ...request(xml, back.fields.espTxnID!) });
      expect(answer.status, await answer.text()).toBe(status);
      if (status === 303) expect(answer.headers.get('location')).toBe(`/sign/return?txn=${txn}`);
      expect(await transactionStatus(txn)).toBe('completed');
      expect((await details(clientId)).status).toBe('completed');
    });

    it('refuses anything else, naming what was missing, with an audit row for the transaction it names; the real answer still lands', async () => {
      const { clientId, txn, back, xml } = await atTheEsp();
      const post = (init: RequestInit) => fetch(back.action, { method: 'POST', redirect: 'manual', ...init });
      const form = (fields: Record<string, string>) => ({
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields),
      });

      const refusals: [RequestInit, number, string][] = [
        // The XML under a field name no ESP uses, with the transaction named.
        [form({ response: xml, aspTxnID: txn }), 400, 'it has no eSignResponse or msg field (fields sent: response, aspTxnID)'],
        [
          form({ eSignResponse: 'not a response at all', aspTxnID: txn }),
          400,
          'the eSignResponse field holds neither XML nor base64 of XML',
        ],
        [
          form({ espTxnID: back.fields.espTxnID!, txnref: Buffer.from(`${txn}|x`).toString('base64') }),
          400,
          '(fields sent: espTxnID, txnref)',
        ],
        [
          { headers: { 'content-type': 'application/xml' }, body: '' },
          400,
          'refused: the XML body is empty: no EsignResp was sent',
        ],
        [
          { headers: { 'content-type': 'text/plain' }, body: xml },
          400,
          'refused: no eSign response: expected a form (application/x-www-form-urlencoded) with an eSignResponse or msg field, or the XML itself as application/xml or text/xml, but got Content-Type text/plain',
        ],
        [
          { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ eSignResponse: xml }) },
          400,
          'but got Content-Type application/json',
        ],
      ];
      for (const [init, status, reason] of refusals) {
        const answer = await post(init);
        const text = await answer.text();
        expect(answer.status, text).toBe(status);
        expect(text).toContain(reason);
        expect(text).not.toContain('root element');
      }
      const refused = (await audit(clientId)).filter((event) => event.event === 'esp_response_refused');
      // The forms name the transaction, and so does the XML sent as text/plain; the empty body and the JSON name none.
      expect(refused.map((event) => event.details)).toEqual([
        {
          txn,
          reason: 'the form carries no eSign response: it has no eSignResponse or msg field (fields sent: response, aspTxnID)',
        },
        { txn, reason: 'the eSignResponse field holds neither XML nor base64 of XML' },
        {
          txn,
          reason: 'the form carries no eSign response: it has no eSignResponse or msg field (fields sent: espTxnID, txnref)',
        },
        {
          txn,
          reason:
            'no eSign response: expected a form (application/x-www-form-urlencoded) with an eSignResponse or msg field, or the XML itself as application/xml or text/xml, but got Content-Type text/plain',
        },
      ]);
      expect(await transactionStatus(txn)).toBe('pending');

      const delivered = await postForm(back.action, back.fields);
      expect(delivered.status, delivered.html).toBe(303);
      expect((await details(clientId)).status).toBe('completed');
    });
  });
});
