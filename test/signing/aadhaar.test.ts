import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aspIdentity, espResponseCertificate } from '../../src/modules/signing/esp/esp-adapter';
import { buildEsignResponse, parseAndVerifyEsignResponse } from '../../src/modules/signing/esp/cca/esign-response';
import { createRootCa } from '../../src/modules/signing/certificates';
import { platformKey } from '../../src/modules/signing/platform-keys';
import { expireDueEspTransactions } from '../../src/modules/signer-journey/aadhaar/esp-outcomes';
import { signEnveloped } from '../../src/modules/signing/esp/cca/xml-dsig';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import {
  createSession,
  formOf,
  postForm,
  sessionBody,
  signAsAadhaar,
  signerInput,
  throughEsp,
  uploadPdf,
} from '../helpers/factories';
import { signaturesOf } from '../helpers/pdf-signatures';
import { hasXmlsec1, xmlsec1Verify } from '../helpers/xmlsec';

/**
 * Aadhaar signing over the CCA eSign API: the service reaches the sandbox ESP only over HTTP, through its gateway,
 * exactly as it would reach a real ESP; these tests play the signer's browser (form posts) and, where they need to,
 * a misbehaving ESP.
 */
describe('Aadhaar signing through an ESP (CCA eSign API 2.1)', () => {
  let app: TestApp;
  let owner: TestUser;
  let file: string;

  beforeAll(async () => {
    // A timeout no step of a loaded machine reaches; the timeout test moves a transaction's deadline instead of waiting.
    app = await startTestApp({ env: { ESP_SANDBOX_TIMEOUT_SECONDS: '600' } });
    owner = await app.createUser();
    file = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app.close());

  const details = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data;
  const audit = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: clientId } })).body.data.events as {
      event: string;
      details: any;
    }[];
  const aadhaarSession = async (overrides: Record<string, unknown> = {}, signer: Record<string, unknown> = {}) => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { sign_type: 'aadhaar', signers: [signerInput(signer)], ...overrides }),
    );
    return { clientId: session.client_id, token: session.signers[0]!.token };
  };
  const em = () => app.services.orm.em.fork();
  /** The ESP's time for a transaction runs out (its deadline moves into the past, as waiting it out would). */
  const pastDeadline = (txn: string) =>
    em().getConnection().execute(`update esp_transactions set expires_at = now() - interval '1 second' where txn = ?`, [txn]);

  /** The signer up to the ESP's answer, which is kept instead of delivered: the form the browser would post back. */
  async function responseHeldBack(token: string, action: 'sign' | 'cancel' = 'sign') {
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const entry = await postForm(started.body.data.esp_url, started.body.data.fields);
    let form = formOf(entry.html, entry.url);
    const otpPage = await postForm(form.action, {
      ...form.fields,
      aadhaar: '234123412346',
      consent: 'yes',
      action: action === 'cancel' ? 'cancel' : 'continue',
    });
    let last = otpPage;
    if (action === 'sign') {
      form = formOf(otpPage.html, form.action);
      last = await postForm(form.action, { ...form.fields, otp: '123456', action: 'sign' });
    }
    const back = formOf(last.html, last.url);
    return { txn: started.body.data.txn as string, back, xml: back.fields.eSignResponse! };
  }

  it('signs at the ESP: the certificate it issues fills aadhaar_cert_details and name_match; the number is kept nowhere', async () => {
    const { clientId, token } = await aadhaarSession({}, { full_name: 'Smt. Asha Rao', name_match: true });
    const signed = await signAsAadhaar(app, token, '2341 2341 2346');
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);

    const read = await details(clientId);
    expect(read.status).toBe('completed');
    expect(read.signers[0].aadhaar_cert_details).toEqual({
      name: 'Asha Rao',
      country: 'IN',
      state: 'Karnataka',
      pin_code: '560001',
      aadhaar: 'XXXXXXXX2346',
      year_of_birth: '1988',
      gender: 'F',
    });
    expect(read.signers[0].name_match).toEqual({
      enforce: true,
      prefill_name: 'Smt. Asha Rao',
      signer_name: 'Asha Rao',
      score: 100,
      status: 'completed',
    });

    const link = await rest<any>(app, 'GET', '/esign/download-pdf', { token: owner.token, query: { client_id: clientId } });
    const pdf = Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
    const [signature] = await signaturesOf(pdf);
    expect(signature!.verification.digestValid && signature!.verification.signatureValid).toBe(true);
    expect(signature!.verification.signerSubject).toContain('CN=Asha Rao');

    // The hash the ESP signed is the SHA-256 of the signature's byte range in the final document.
    const events = await audit(clientId);
    const sent = events.find((event) => event.event === 'esp_request_sent')!;
    const [a, b, c, d] = signature!.byteRange;
    const rangeHash = createHash('sha256')
      .update(pdf.subarray(a!, a! + b!))
      .update(pdf.subarray(c!, c! + d!))
      .digest('hex');
    expect(sent.details).toMatchObject({ backend: 'sandbox', version: '2.1', input_hash: rangeHash, auth_mode: 1 });
    expect(events.map((event) => event.event)).toEqual(
      expect.arrayContaining(['esp_request_sent', 'signed', 'session_completed']),
    );

    const rows = await em().getConnection().execute('select * from esp_transactions');
    expect(rows.find((row: any) => row.txn === sent.details.txn)).toMatchObject({
      status: 'completed',
      documents: [expect.objectContaining({ id: '1', input_hash: rangeHash })],
    });
    // The full Aadhaar number reaches the ESP only: not the service's rows, answers or logs.
    expect(JSON.stringify(rows) + JSON.stringify(read) + JSON.stringify(events) + JSON.stringify(app.logs)).not.toContain(
      '234123412346',
    );
  });

  it('sends the request the CCA API defines, signed by the ASP: xmlsec1 verifies it, and a changed byte fails', async () => {
    const { token } = await aadhaarSession({ auth_mode: 2 });
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.status).toBe(200);
    const { esp_url: espUrl, fields, txn } = started.body.data;
    expect(espUrl).toBe(`${app.services.config.publicUrl}/sandbox/esp`);
    expect(Object.keys(fields).sort()).toEqual(['Content-Type', 'aspTxnID', 'eSignRequest']);
    expect(fields.aspTxnID).toBe(txn);
    const xml: string = fields.eSignRequest;
    const root = /<Esign ([^>]*)>/.exec(xml)![1]!;
    const attributes = Object.fromEntries([...root.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1], match[2]]));
    expect(attributes).toMatchObject({
      ver: '2.1',
      sc: 'Y',
      txn,
      ekycIdType: 'A',
      aspId: 'ESIGN-SANDBOX-ASP',
      AuthMode: '2',
      responseSigType: 'pkcs7',
      responseUrl: `${app.services.config.publicUrl}/esp/response/sandbox`,
    });
    expect(attributes.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(xml).toMatch(/<InputHash id="1" hashAlgorithm="SHA256" docInfo="[^"]+">[0-9a-f]{64}<\/InputHash>/);
    expect(xml).toContain('http://www.w3.org/2001/10/xml-exc-c14n#');
    expect(xml).toContain('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    if (hasXmlsec1) {
      const asp = await aspIdentity(app.services, em(), app.services.config.esps.sandbox!);
      const verdict = xmlsec1Verify(xml, asp.certificatePem);
      expect(verdict.ok, verdict.output).toBe(true);
      expect(xmlsec1Verify(xml.replace('AuthMode="2"', 'AuthMode="1"'), asp.certificatePem).ok).toBe(false);
    }
    // The gateway refuses a request whose signature does not hold: its own page, nothing sent anywhere.
    const tampered = await postForm(espUrl, { ...fields, eSignRequest: xml.replace(/>[0-9a-f]{64}</, `>${'0'.repeat(64)}<`) });
    expect(tampered.status).toBe(400);
    expect(tampered.html).not.toContain('eSignResponse');
  });

  it('scores a different certificate name low without refusing the signature; biometric with auth mode 2', async () => {
    const { clientId, token } = await aadhaarSession({ auth_mode: 2 }, { full_name: 'Asha Rao', name_match: true });
    expect((await signAsAadhaar(app, token, '456745674566')).status).toBe(200);
    const match = (await details(clientId)).signers[0].name_match;
    expect(match).toMatchObject({ signer_name: 'Vikram Singh', status: 'completed' });
    expect(match.score).toBeLessThan(30);
  });

  it('refuses what is not an Aadhaar signature at the ESP: no consent, another sign type, the old OTP route', async () => {
    const { token } = await aadhaarSession();
    expect((await signerApi(app, 'POST', '/esp/start', token, {})).status).toBe(400);
    const direct = await signerApi(app, 'POST', '/sign', token, { consent: true });
    expect(direct.status).toBe(409);
    expect(direct.body.message).toContain('/signer-api/esp/start');
    expect((await signerApi(app, 'POST', '/aadhaar/otp', token, { aadhaar_number: '234123412346', consent: true })).status).toBe(
      404,
    );
    const suresign = await createSession(app, owner.token, sessionBody(file));
    expect((await signerApi(app, 'POST', '/esp/start', suresign.signers[0]!.token, { consent: true })).status).toBe(409);
  });

  it('refuses a response signed by another key, and one for a transaction that is not ours; both audited', async () => {
    const { clientId, token } = await aadhaarSession();
    const { txn, back, xml } = await responseHeldBack(token);
    // The same response, its signature replaced by one of another key (not the configured ESP's).
    const stranger = createRootCa('Not The ESP', 'Nobody');
    const unsigned = xml.replace(/<Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#">[\s\S]*<\/Signature>/, '');
    const forged = signEnveloped(unsigned.replace(/^<\?xml[^>]*\?>/, ''), stranger);
    const refused = await postForm(back.action, { ...back.fields, eSignResponse: forged });
    expect(refused.status).toBe(400);
    // A response made with the ESP's real key for a txn the service never sent.
    const espKey = await platformKey(app.services, em(), 'sandbox-esp-response-signer', () => {
      throw new Error('the sandbox ESP key exists by now');
    });
    const parsed = parseAndVerifyEsignResponse(
      xml,
      await espResponseCertificate(app.services, em(), app.services.config.esps.sandbox!),
    );
    const foreign = buildEsignResponse({
      version: '2.1',
      txn: 'esptxn_' + 'f'.repeat(32),
      resCode: 'r1',
      status: 'success',
      userCertificatePem: parsed.userCertificatePem,
      signatures: [{ id: '1', cms: parsed.signatures[0]!.cms }],
      signer: espKey,
    });
    expect((await postForm(back.action, { eSignResponse: foreign })).status).toBe(400);

    const events = await audit(clientId);
    const refusals = events.filter((event) => event.event === 'esp_response_refused');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]!.details).toMatchObject({ txn, reason: expect.stringContaining('does not verify') });
    expect((await details(clientId)).status).toBe('pending');
    // The genuine response is still taken, once; the same response again is a replay.
    const genuine = await postForm(back.action, back.fields);
    expect(genuine.status).toBe(303);
    expect(genuine.location).toBe(`/sign/return?txn=${txn}`);
    expect((await details(clientId)).status).toBe('completed');
    const replay = await postForm(back.action, back.fields);
    expect(replay.status).toBe(400);
    const after = (await audit(clientId)).filter((event) => event.event === 'esp_response_refused');
    expect(after.at(-1)!.details.reason).toContain('answered already');
    expect((await audit(clientId)).filter((event) => event.event === 'signed')).toHaveLength(1);
  });

  it('an ESP-signed response whose PKCS#7 signs another hash fails the transaction, costs an attempt, signs nothing', async () => {
    const { clientId, token } = await aadhaarSession({ max_retry: 3 });
    const other = await aadhaarSession();
    // A genuine signature of the other session's document, returned for this transaction.
    const elsewhere = await responseHeldBack(other.token);
    const mine = await responseHeldBack(token, 'cancel');
    const certificate = await espResponseCertificate(app.services, em(), app.services.config.esps.sandbox!);
    const theirs = parseAndVerifyEsignResponse(elsewhere.xml, certificate);
    const espKey = await platformKey(app.services, em(), 'sandbox-esp-response-signer', () => {
      throw new Error('the sandbox ESP key exists by now');
    });
    const swapped = buildEsignResponse({
      version: '2.1',
      txn: mine.txn,
      resCode: 'r2',
      status: 'success',
      userCertificatePem: theirs.userCertificatePem,
      signatures: [{ id: '1', cms: theirs.signatures[0]!.cms }],
      signer: espKey,
    });
    expect((await postForm(mine.back.action, { eSignResponse: swapped })).status).toBe(303);
    const view = (await signerApi(app, 'GET', '/session', token)).body.data;
    expect(view.signer.esp_transaction).toMatchObject({ txn: mine.txn, status: 'failed', error_code: 'esp_signature_invalid' });
    expect(view.signer.attempts_left).toBe(2);
    expect((await details(clientId)).signers[0].status).toBe('pending');
    expect((await audit(clientId)).some((event) => event.event === 'signed')).toBe(false);
  });

  it('an ESP error (a failed authentication) is shown and costs an attempt; the last attempt fails the signer', async () => {
    const { clientId, token } = await aadhaarSession({ max_retry: 2 });
    const first = await signAsAadhaar(app, token, { failAuthentication: true });
    expect(first.status).toBe(409);
    expect(first.body.data.signer.esp_transaction).toMatchObject({
      status: 'failed',
      error_code: 'ESP-910',
      error_message: 'Aadhaar OTP authentication failed: attempts exhausted',
      cancelled_by_signer: false,
    });
    expect(first.body.data.signer.attempts_left).toBe(1);
    expect((await details(clientId)).signers[0].status).toBe('pending');
    const second = await signAsAadhaar(app, token, { failAuthentication: true });
    expect(second.body.data.signer.status).toBe('failed');
    expect((await details(clientId)).signers[0].status).toBe('failed');
    expect((await signerApi(app, 'POST', '/esp/start', token, { consent: true })).status).toBe(409);
    const events = (await audit(clientId)).map((event) => event.event);
    expect(events.filter((event) => event === 'esp_failed')).toHaveLength(2);
    expect(events).toContain('signer_failed');
  });

  it('the signer’s Cancel at the ESP (ESP-944 before the OTP, ESP-945 after) costs no attempt, however often', async () => {
    const { clientId, token } = await aadhaarSession({ max_retry: 1 });
    for (const expected of ['ESP-944', 'ESP-945', 'ESP-944']) {
      const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const { esp_url: espUrl, fields } = started.body.data;
      const entry = await postForm(espUrl, fields);
      let form = formOf(entry.html, espUrl);
      let page = await postForm(form.action, {
        ...form.fields,
        aadhaar: '234123412346',
        consent: 'yes',
        action: expected === 'ESP-944' ? 'cancel' : 'continue',
      });
      if (expected === 'ESP-945') {
        form = formOf(page.html, form.action);
        page = await postForm(form.action, { ...form.fields, action: 'cancel' });
      }
      const back = formOf(page.html, page.url);
      expect((await postForm(back.action, back.fields)).status).toBe(303);
      const view = (await signerApi(app, 'GET', '/session', token)).body.data;
      expect(view.signer.esp_transaction).toMatchObject({ status: 'failed', error_code: expected, cancelled_by_signer: true });
      expect(view.signer.attempts_left).toBe(1);
      expect(view.signer.status).toBe('pending');
    }
    const events = (await audit(clientId)).filter(
      (event) => event.event.startsWith('esp_') && event.event !== 'esp_request_sent',
    );
    expect(events.map((event) => [event.event, event.details.error_code, event.details.attempts_left])).toEqual([
      ['esp_cancelled', 'ESP-944', 1],
      ['esp_cancelled', 'ESP-945', 1],
      ['esp_cancelled', 'ESP-944', 1],
    ]);
    // Still one attempt: the signer signs.
    expect((await signAsAadhaar(app, token)).status).toBe(200);
  });

  it('an ESP that never answers: the signer may start again after the timeout, and the late answer is refused', async () => {
    const { clientId, token } = await aadhaarSession();
    const late = await responseHeldBack(token);
    const again = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(again.status).toBe(409);
    expect(again.body.data ?? again.body).toBeTruthy();
    await pastDeadline(late.txn);
    const view = (await signerApi(app, 'GET', '/session', token)).body.data;
    expect(view.signer.esp_transaction).toMatchObject({ txn: late.txn, status: 'expired', error_code: 'esp_timeout' });
    const restarted = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(restarted.status).toBe(200);
    expect((await postForm(late.back.action, late.back.fields)).status).toBe(400);
    const refusal = (await audit(clientId)).filter((event) => event.event === 'esp_response_refused').at(-1)!;
    expect(refusal.details).toMatchObject({ txn: late.txn, reason: expect.stringContaining('timed out') });
    expect((await details(clientId)).status).toBe('pending');

    // Abandoned for good: the sweep expires it and deletes its prepared bytes.
    const [row] = await em()
      .getConnection()
      .execute(
        `select txn, documents->0->>'prepared_key' as prepared_key from esp_transactions where signer_id = ? and status = ?`,
        [view.signer.signer_id, 'pending'],
      );
    expect(await app.services.blobs.stat(row.prepared_key)).not.toBeNull();
    await pastDeadline(row.txn);
    expect(await expireDueEspTransactions(app.services, em(), 100)).toBeGreaterThanOrEqual(1);
    expect(await app.services.blobs.stat(row.prepared_key)).toBeNull();
    const [after] = await em()
      .getConnection()
      .execute('select status, error_code from esp_transactions where txn = ?', [row.txn]);
    expect(after).toEqual({ status: 'expired', error_code: 'esp_timeout' });
  });
  it('a signer who left the ESP starts over at once (restart: true): no attempt lost, the old answer refused', async () => {
    const { clientId, token } = await aadhaarSession({ max_retry: 1 });
    const left = await responseHeldBack(token);
    const blocked = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(blocked.status).toBe(409);
    expect(blocked.body.message).toContain('restart: true');
    const restarted = await signerApi(app, 'POST', '/esp/start', token, { consent: true, restart: true });
    expect(restarted.status).toBe(200);
    expect((await postForm(left.back.action, left.back.fields)).status).toBe(400);
    const events = await audit(clientId);
    expect(events.find((event) => event.event === 'esp_request_sent' && event.details.replaces_txn === left.txn)).toBeTruthy();
    expect(events.filter((event) => event.event === 'esp_response_refused').at(-1)!.details.reason).toContain('abandoned');
    // The new transaction signs, with the one attempt intact.
    expect((await signerApi(app, 'GET', '/session', token)).body.data.signer.attempts_left).toBe(1);
  });
  it('parallel signing: a signature that lands while the ESP signs makes its answer stale; no attempt lost, signed again', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        sign_type: 'aadhaar',
        signing_order: 'parallel',
        signers: [
          signerInput({ full_name: 'Asha Rao', elements: [{ type: 'signature', page: 0, x: 72, y: 640, alignment: 'left' }] }),
          signerInput({
            full_name: 'Acme Legal',
            sign_type: 'suresign',
            elements: [{ type: 'signature', page: 0, x: 320, y: 640, alignment: 'left' }],
          }),
        ],
      }),
    );
    const [asha, acme] = session.signers;
    const held = await responseHeldBack(asha!.token);
    expect((await signerApi(app, 'POST', '/sign', acme!.token, { consent: true })).status).toBe(200);
    expect((await postForm(held.back.action, held.back.fields)).status).toBe(303);
    const view = (await signerApi(app, 'GET', '/session', asha!.token)).body.data;
    expect(view.signer.esp_transaction).toMatchObject({ txn: held.txn, status: 'failed', error_code: 'document_changed' });
    expect(view.signer.attempts_left).toBe(3);
    expect((await signAsAadhaar(app, asha!.token)).status).toBe(200);
    const read = await details(session.client_id);
    expect(read.status).toBe('completed');
    const link = await rest<any>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    const pdf = Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
    const signatures = await signaturesOf(pdf);
    expect(
      signatures.filter((signature) => signature.verification.digestValid && signature.verification.signatureValid),
    ).toHaveLength(2);
  });
  it('races: two starts at once open one transaction; one answer delivered twice at once signs once', async () => {
    const { clientId, token } = await aadhaarSession();
    const starts = await Promise.all([1, 2].map(() => signerApi(app, 'POST', '/esp/start', token, { consent: true })));
    expect(starts.map((start) => start.status).sort()).toEqual([200, 409]);
    const { token: other, clientId: otherId } = await aadhaarSession();
    const held = await responseHeldBack(other);
    const deliveries = await Promise.all([1, 2, 3].map(() => postForm(held.back.action, held.back.fields)));
    expect(deliveries.map((delivery) => delivery.status).sort()).toEqual([303, 400, 400]);
    expect((await audit(otherId)).filter((event) => event.event === 'signed')).toHaveLength(1);
    expect((await details(otherId)).status).toBe('completed');
    expect((await details(clientId)).status).toBe('pending');
  });
});

describe('Aadhaar signing through an ESP (CCA eSign API 3.2)', () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ env: { ESP_SANDBOX_VERSION: '3.2' } });
    owner = await app.createUser();
  });
  afterAll(async () => app.close());

  it('the request goes server to server; the signer opens the ESP’s page with txnref; the ESP posts the response and sends the signer back', async () => {
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(app, owner.token, sessionBody(file, { sign_type: 'aadhaar' }));
    const token = session.signers[0]!.token;
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const { txn, esp_url: espUrl, fields } = started.body.data;
    // No request in the browser: the sandbox ESP acknowledged it to this server, the browser carries only txnref.
    expect(espUrl).toBe(`${app.services.config.publicUrl}/sandbox/esp/authpage`);
    expect(Object.keys(fields)).toEqual(['txnref']);
    const [refTxn, resCode] = Buffer.from(fields.txnref, 'base64').toString().split('|');
    expect(refTxn).toBe(txn);
    const events = (await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } }))
      .body.data.events as { event: string; details: any }[];
    expect(events.find((event) => event.event === 'esp_request_sent')?.details).toMatchObject({ version: '3.2', txn });
    expect(events.find((event) => event.event === 'esp_acknowledged')?.details).toEqual({
      backend: 'sandbox',
      txn,
      res_code: resCode,
    });

    const { last } = await throughEsp(espUrl, fields, { authMode: 1 });
    expect(last.status).toBe(303);
    const back = new URL(last.location!);
    expect(`${back.origin}${back.pathname}${back.search.split('&')[0]}`).toBe(
      `${app.services.config.publicUrl}/sign/return?txn=${txn}`,
    );
    expect(Buffer.from(back.searchParams.get('txnref')!, 'base64').toString().split('|')[0]).toBe(txn);
    // The browser comes back by GET, or (some ESPs) by a form POST: the same return page.
    expect((await fetch(back, { redirect: 'manual' })).status).toBe(200);
    const posted = await postForm(`${app.services.config.publicUrl}/sign/return?txn=${txn}`, {
      txnref: back.searchParams.get('txnref')!,
    });
    expect(posted.status).toBe(303);
    expect(posted.location).toBe(`/sign/return?txn=${txn}`);

    const read = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } });
    expect(read.body.data.status).toBe('completed');
    expect(read.body.data.signers[0].aadhaar_cert_details.name).toBe('Asha Rao');
    const view = await signerApi(app, 'GET', '/session', token);
    expect(view.body.data.signer.esp_transaction).toMatchObject({ txn, status: 'completed' });
    // Answered: its txnref opens nothing at the ESP any more.
    expect((await postForm(espUrl, fields)).status).toBe(400);
  });
});
