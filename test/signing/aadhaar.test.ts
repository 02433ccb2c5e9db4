import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_BIOMETRIC, SANDBOX_OTP } from '../../src/modules/signing/esp/sandbox-esp';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, type Envelope } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { signaturesOf } from '../helpers/pdf-signatures';

describe('Aadhaar signing through the sandbox ESP', () => {
  let app: TestApp;
  let owner: TestUser;
  let file: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    file = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app.close());

  async function call<T = any>(path: string, token: string, json: unknown) {
    const response = await fetch(new URL(`/signer-api${path}`, app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    return { status: response.status, body: (await response.json()) as Envelope<T> };
  }
  const details = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data;

  it('signs with an Aadhaar number and OTP, and reads the certificate back into aadhaar_cert_details and name_match', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { sign_type: 'aadhaar', signers: [signerInput({ full_name: 'Smt. Asha Rao', name_match: true })] }),
    );
    const token = session.signers[0].token;
    const started = await call('/aadhaar/otp', token, { aadhaar_number: '2341 2341 2346', consent: true });
    expect(started.status).toBe(200);
    expect(started.body.data).toMatchObject({ transaction_id: expect.stringMatching(/^esptx_/), otp_sent_to: 'XXXXXX3210' });
    const signed = await call('/sign', token, {
      consent: true,
      transaction_id: started.body.data.transaction_id,
      otp: SANDBOX_OTP,
    });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);

    const read = await details(session.client_id);
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

    const link = await rest<any>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    const pdf = Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
    const [signature] = await signaturesOf(pdf);
    expect(signature.verification.digestValid && signature.verification.signatureValid).toBe(true);
    expect(signature.verification.signerSubject).toContain('CN=Asha Rao');
    // The full number is in neither the session, the ESP records, nor the logs.
    const rows = await app.services.orm.em.fork().getConnection().execute('select * from sandbox_esp_transactions');
    expect(JSON.stringify(rows) + JSON.stringify(read) + JSON.stringify(app.logs)).not.toContain('234123412346');
    // A transaction is spent once.
    expect(
      (await call('/sign', token, { consent: true, transaction_id: started.body.data.transaction_id, otp: SANDBOX_OTP })).status,
    ).toBe(409);
  });

  it('scores a different certificate name low without refusing the signature', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { sign_type: 'aadhaar', signers: [signerInput({ full_name: 'Asha Rao', name_match: true })] }),
    );
    const token = session.signers[0].token;
    const started = await call('/aadhaar/otp', token, { aadhaar_number: '456745674566', consent: true });
    expect(
      (await call('/sign', token, { consent: true, transaction_id: started.body.data.transaction_id, otp: SANDBOX_OTP })).status,
    ).toBe(200);
    const match = (await details(session.client_id)).signers[0].name_match;
    expect(match).toMatchObject({ signer_name: 'Vikram Singh', status: 'completed' });
    expect(match.score).toBeLessThan(30);
  });

  it('refuses invalid and unknown Aadhaar numbers, and non-Aadhaar signers', async () => {
    const session = await createSession(app, owner.token, sessionBody(file, { sign_type: 'aadhaar' }));
    const token = session.signers[0].token;
    const bad = await call('/aadhaar/otp', token, { aadhaar_number: '234123412345', consent: true });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('invalid_aadhaar_number');
    const unknown = await call('/aadhaar/otp', token, { aadhaar_number: '999999999990'.slice(0, 11) + '0', consent: true });
    expect(unknown.status).toBe(400);
    expect(['invalid_aadhaar_number', 'aadhaar_not_enrolled']).toContain(unknown.body.message);
    const noConsent = await call('/aadhaar/otp', token, { aadhaar_number: '234123412346' });
    expect(noConsent.status).toBe(400);

    const suresign = await createSession(app, owner.token, sessionBody(file));
    expect(
      (await call('/aadhaar/otp', suresign.signers[0].token, { aadhaar_number: '234123412346', consent: true })).status,
    ).toBe(409);
  });

  it('counts wrong OTPs against max_retry; the last one fails the signer', async () => {
    const session = await createSession(app, owner.token, sessionBody(file, { sign_type: 'aadhaar', max_retry: 2 }));
    const token = session.signers[0].token;
    const started = await call('/aadhaar/otp', token, { aadhaar_number: '987698769870', consent: true });
    const transaction = started.body.data.transaction_id;
    const first = await call('/sign', token, { consent: true, transaction_id: transaction, otp: '000000' });
    expect(first.status).toBe(400);
    expect(first.body).toMatchObject({ message: 'otp_invalid', errors: [{ field: 'otp', problem: '1 attempt(s) left' }] });
    expect((await details(session.client_id)).signers[0].status).toBe('pending');
    const second = await call('/sign', token, { consent: true, transaction_id: transaction, otp: '111111' });
    expect(second.body.errors?.[0].problem).toContain('no attempts left');
    const read = await details(session.client_id);
    expect(read.signers[0].status).toBe('failed');
    expect(read.signers[0].eligible).toBe(false);
    expect(read.status).toBe('pending');
    // Even the right OTP cannot sign for a failed signer.
    expect((await call('/sign', token, { consent: true, transaction_id: transaction, otp: SANDBOX_OTP })).status).toBe(409);
  });

  it('accepts the sandbox biometric capture with auth mode 2', async () => {
    const session = await createSession(app, owner.token, sessionBody(file, { sign_type: 'aadhaar', auth_mode: 2 }));
    const token = session.signers[0].token;
    const started = await call('/aadhaar/otp', token, { aadhaar_number: '567856785670', consent: true });
    expect(
      (await call('/sign', token, { consent: true, transaction_id: started.body.data.transaction_id, otp: SANDBOX_OTP })).status,
    ).toBe(400);
    const again = await call('/aadhaar/otp', token, { aadhaar_number: '567856785670', consent: true });
    expect(
      (await call('/sign', token, { consent: true, transaction_id: again.body.data.transaction_id, otp: SANDBOX_BIOMETRIC }))
        .status,
    ).toBe(200);
  });
});
