import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';

/** Whatever a client sends to the signer API, it gets a documented 4xx in the envelope: never a 500, never a hang. */
describe('the signer API under bad input', () => {
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    app = await startTestApp();
    const owner = await app.createUser();
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { signers: [signerInput({ verify_email: true, verify_location: true })] }),
    );
    token = session.signers[0].token as string;
  });
  afterAll(async () => app.close());

  const bodies: [string, string, string][] = [
    ['malformed JSON', '{"channel": ', 'application/json'],
    ['an array', '[1, 2]', 'application/json'],
    ['a string', '"email"', 'application/json'],
    ['null', 'null', 'application/json'],
    [
      'wrong types',
      '{"channel": 5, "code": {"a": 1}, "latitude": "12", "consent": "yes", "aadhaar_number": []}',
      'application/json',
    ],
    ['a form body', 'channel=email', 'application/x-www-form-urlencoded'],
    ['plain text', 'hello', 'text/plain'],
    ['a large JSON body', JSON.stringify({ channel: 'email', pad: 'x'.repeat(64 * 1024) }), 'application/json'],
  ];
  const paths = ['/otp/send', '/otp/verify', '/location', '/face', '/esp/start', '/sign', '/decline', '/delegate'];

  for (const path of paths) {
    for (const [what, body, type] of bodies) {
      it(`POST ${path} with ${what}: a 4xx envelope`, async () => {
        const response = await fetch(new URL(`/signer-api${path}`, app.url), {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': type },
          body,
        });
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        const envelope = (await response.json()) as { success: boolean; status_code: number; message: string };
        expect(envelope).toMatchObject({ success: false, status_code: response.status, message: expect.any(String) });
      });
    }
  }

  it('refuses a photo over 5 MB without reading it whole, and unknown tokens everywhere', async () => {
    const big = await fetch(new URL('/signer-api/face', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'image/jpeg' },
      body: new Uint8Array(6 * 1024 * 1024),
    });
    expect(big.status).toBe(413);
    for (const path of paths) {
      const response = await fetch(new URL(`/signer-api${path}`, app.url), {
        method: 'POST',
        headers: { authorization: 'Bearer not-a-token', 'content-type': 'application/json' },
        body: '{}',
      });
      expect(response.status).toBe(401);
    }
  });
});
