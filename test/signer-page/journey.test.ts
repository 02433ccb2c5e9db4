import type { BrowserContextOptions } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Notification } from '../../src/modules/notifications/notification.entity';
import { SANDBOX_OTP } from '../../src/modules/sandbox/esp/sandbox-esp';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { DESKTOP, PHONE, hasChromium, useBrowser, watchPage } from '../helpers/browser';
import { rest, restUpload } from '../helpers/clients';
import { FOUR_PAGE_PDF, createSession, sessionBody, signatureAt, signerInput, uploadPdf } from '../helpers/factories';
import { brighten, jpegBytes, resize, sampleFace, sampleFaceJpeg } from '../helpers/faces';
import { hasPdfsig, longTermTailProblems, pdfsigReport, signaturesOf } from '../helpers/pdf-signatures';

// The geofence: a 500 m circle around Vidhana Soudha, Bengaluru.
const OFFICE = { latitude: 12.9796, longitude: 77.5906 };
const NEAR_OFFICE = { latitude: 12.9811, longitude: 77.5921, accuracy: 15 }; // about 230 m away
const MUMBAI = { latitude: 19.076, longitude: 72.8777, accuracy: 30 };

/**
 * The whole signer journey in Debian's Chromium against the real service: two signers, an email code read
 * from the outbox, a geofence (refused from far away, passed from near), a face match on face-api's sample
 * photos (a different person refused, the same person passed) and Aadhaar signing; the result is checked
 * by pdfsig. Nothing is faked between the browser and the database.
 */
describe.skipIf(!hasChromium)('the signer journey, end to end in a browser', () => {
  let app: TestApp;
  let owner: TestUser;
  const browser = useBrowser();

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
  });
  afterAll(async () => app.close());

  async function open(url: string, options: BrowserContextOptions) {
    const context = await browser().newContext({ ...options, reducedMotion: 'reduce' });
    const page = await context.newPage();
    const { errors } = watchPage(page);
    await page.goto(url);
    return { context, page, errors };
  }

  /** The code the signer was sent, as the outbox holds it (no SMTP configured). */
  async function sentCode(signerId: string): Promise<string> {
    let code: string | undefined;
    await expect
      .poll(
        async () => {
          const [message] = await app.services.orm.em
            .fork()
            .find(Notification, { signer: signerId, kind: 'email_otp' }, { orderBy: { createdAt: 'desc' }, limit: 1 });
          code = /\b(\d{6})\b/.exec(message?.textBody ?? '')?.[1];
          return code;
        },
        { timeout: 10_000 },
      )
      .toBeDefined();
    return code!;
  }

  it('two signers with an email code, a geofence, a face match and Aadhaar: the document pdfsig validates', async () => {
    const fileId = await uploadPdf(app, owner.token, FOUR_PAGE_PDF, 'lease.pdf');
    const reference = await restUpload<any>(app, '/files/upload-asset', owner.token, {
      bytes: sampleFaceJpeg(6, 2),
      filename: 'reference.jpg',
    });
    expect(reference.status).toBe(200);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        sender: 'Acme Realty',
        email_template_overrides: { company_name: 'Acme Realty', support_email: 'help@acme.example' },
        allow_download: true,
        signers: [
          signerInput({
            full_name: 'Ravi Kumar',
            email: 'ravi@example.com',
            reason: 'Landlord',
            verify_email: true,
            enforce_geofence: true,
            ...OFFICE,
            radius: 500,
            elements: [signatureAt(3, 72, 650)],
          }),
          signerInput({
            full_name: 'Asha Rao',
            email: 'asha@example.com',
            sign_type: 'aadhaar',
            reason: 'Tenant',
            face_ref_file_id: reference.body.data.client_id,
            face_match_threshold: 80,
            face_max_attempts: 3,
            elements: [signatureAt(3, 320, 650)],
          }),
        ],
      }),
    );
    const [ravi, asha] = session.signers;

    // Ravi, on a desktop: email code, then location (Mumbai is refused, near the office passes), then suresign.
    const first = await open(ravi.invite_url as string, { ...DESKTOP, permissions: ['geolocation'], geolocation: MUMBAI });
    try {
      const { page } = first;
      const heading = page.locator('#step-heading');
      await expect.poll(() => heading.textContent(), { timeout: 20_000 }).toBe('Verify your email address');
      expect(await page.locator('body').innerText()).toContain('Acme Realty');
      await page.getByRole('button', { name: 'Send code' }).click();
      await page.getByLabel('Verification code').fill(await sentCode(ravi.signer_id as string));
      await page.getByRole('button', { name: 'Verify code' }).click();

      await expect.poll(() => heading.textContent()).toBe('Confirm your location');
      await page.getByRole('button', { name: 'Share my location' }).click();
      await expect
        .poll(() => page.locator('.step .action-error').textContent())
        .toMatch(/you are 8\d\d\.\d km from the signing location/i);
      await first.context.setGeolocation(NEAR_OFFICE);
      await page.getByRole('button', { name: 'Share my location' }).click();

      await expect.poll(() => heading.textContent()).toBe('Sign the document');
      await page.getByLabel('I have read the document and I agree to sign it electronically.').check();
      await page.getByRole('button', { name: 'Sign the document' }).click();
      await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
    } finally {
      await first.context.close();
    }

    // Asha, on a phone: a photo of someone else is refused, her own (another shot of the reference face) passes,
    // then Aadhaar number, consent and OTP.
    const second = await open(asha.invite_url as string, PHONE);
    try {
      const { page } = second;
      const heading = page.locator('#step-heading');
      await expect.poll(() => heading.textContent(), { timeout: 20_000 }).toBe('Take a photo of your face');
      const picker = page.getByLabel('Or choose a photo of your face');
      await picker.setInputFiles({ name: 'someone-else.jpg', mimeType: 'image/jpeg', buffer: sampleFaceJpeg(6, 3) });
      await page.getByRole('button', { name: 'Use this photo' }).click();
      await expect
        .poll(() => page.locator('.step .action-error').textContent(), { timeout: 30_000 })
        .toMatch(
          /^The photo does not match the reference photo\. The face does not match \(score [\d.]+, 80 needed\); 2 attempts left\.$/,
        );
      const sameFace = jpegBytes(brighten(resize(sampleFace(6, 2), 180), 25), 80);
      await picker.setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: sameFace });
      await page.getByRole('button', { name: 'Use this photo' }).click();

      // Aadhaar: consent here, then the ESP's own pages (the sandbox gateway), then back to this page.
      await page.getByLabel(/I agree to authenticate with Aadhaar/).waitFor({ timeout: 30_000 });
      await page.getByLabel(/I agree to authenticate with Aadhaar/).check();
      await page.getByRole('button', { name: 'Continue to Aadhaar eSign' }).click();
      await page.getByRole('textbox', { name: 'Aadhaar number' }).fill('2341 2341 2346');
      await page.getByLabel(/I consent to this eSign Service Provider/).check();
      await page.getByRole('button', { name: 'Continue', exact: true }).click();
      await page.getByLabel(/One-time password/).fill(SANDBOX_OTP);
      await page.getByRole('button', { name: 'Sign', exact: true }).click();
      await page.locator('[data-screen="done"]').waitFor({ timeout: 30_000 });
    } finally {
      await second.context.close();
    }

    // What the owner sees: completed, the checks' results, a document whose both signatures are valid.
    const read = (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } }))
      .body.data;
    expect(read.status).toBe('completed');
    expect(read.signers[0].email_verified_at).toEqual(expect.any(String));
    expect(read.signers[0].location).toMatchObject({
      source: 'device',
      ...{ latitude: NEAR_OFFICE.latitude, longitude: NEAR_OFFICE.longitude },
    });
    expect(read.signers[0].location.distance_m).toBeGreaterThan(150);
    expect(read.signers[0].location.distance_m).toBeLessThan(500);
    expect(read.signers[1].face_match).toMatchObject({ enforce: true, match_threshold: 80, max_attempts: 3 });
    expect(read.signers[1].face_match.match_score).toBeGreaterThanOrEqual(80);
    expect(read.signers[1].face_match.liveness_score).toEqual(expect.any(Number));
    expect(read.signers[1].face_match.live_file_id).toMatch(/^file_/);
    expect(read.signers[1].aadhaar_cert_details).toMatchObject({ name: 'Asha Rao', aadhaar: 'XXXXXXXX2346' });

    const link = await rest<any>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    const pdf = Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
    const signatures = await signaturesOf(pdf);
    expect(signatures.map((signature) => [signature.verification.signatureValid, signature.verification.digestValid])).toEqual([
      [true, true],
      [true, true],
    ]);
    // The second signature covers everything but the completion's long-term updates (a /DSS, a document time-stamp).
    expect(await longTermTailProblems(pdf)).toEqual([]);
    if (hasPdfsig) {
      const report = pdfsigReport(pdf);
      expect(report.map((entry) => [entry.kind, entry.kind === 'signature' ? entry.valid : entry.total])).toEqual([
        ['signature', true],
        ['signature', true],
        ['document-timestamp', true],
      ]);
    }

    const trail = (await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } }))
      .body.data.events;
    const steps = (signerId: string) =>
      trail
        .filter((event: any) => event.signer_id === signerId && !/^(invite_sent|completion_sent)$/.test(event.event))
        .map((event: any) => event.event);
    expect(steps(ravi.signer_id as string)).toEqual([
      'viewed',
      'otp_sent',
      'otp_verified',
      'location_refused',
      'location_recorded',
      'signed',
    ]);
    expect(steps(asha.signer_id as string)).toEqual(['viewed', 'face_attempt', 'face_attempt', 'esp_request_sent', 'signed']);
    // Every step the signers took carries their browser and address (the queue's deliveries have none).
    for (const event of trail.filter((event: any) => event.signer_id && !/^(invite_sent|completion_sent)$/.test(event.event))) {
      expect(event).toMatchObject({ ip: '127.0.0.1', user_agent: expect.stringMatching(/Chrome/) });
    }
    expect(trail.map((event: any) => event.event)).toContain('session_completed');
    expect(first.errors.filter((error) => !/\b(403|400)\b/.test(error))).toEqual([]);
    expect(second.errors.filter((error) => !/\b(400)\b/.test(error))).toEqual([]);
  });
});
