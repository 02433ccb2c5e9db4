import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { Notification } from '../../src/modules/notifications/notification.entity';
import { SignerOtp } from '../../src/modules/signer-journey/checks/signer-otp.entity';
import { distanceMetres } from '../../src/modules/signer-journey/checks/location-check';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, type Envelope } from '../helpers/clients';
import { createSession, sessionBody, signAsAadhaar, signerInput, uploadPdf } from '../helpers/factories';

// Bengaluru, Vidhana Soudha: the geofence centre of these tests.
const CENTRE = { latitude: 12.9796, longitude: 77.5906 };

describe('pre-signing checks through the signer API', () => {
  let app: TestApp;
  let owner: TestUser;
  let file: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    file = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app.close());

  async function call<T = any>(
    method: 'GET' | 'POST',
    path: string,
    token: string,
    json?: unknown,
    headers: Record<string, string> = {},
  ) {
    const response = await fetch(new URL(`/signer-api${path}`, app.url), {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: response.status, body: (await response.json()) as Envelope<T> };
  }

  /** The code the outbox holds for this signer's latest message of that kind. */
  async function latestCode(signerId: string, kind: 'email_otp' | 'mobile_otp'): Promise<string> {
    const [message] = await app.services.orm.em
      .fork()
      .find(Notification, { signer: signerId, kind }, { orderBy: { createdAt: 'desc' }, limit: 1 });
    const code = /\b(\d{6})\b/.exec(message?.textBody ?? '')?.[1];
    if (!code) throw new Error(`no ${kind} message for ${signerId}`);
    return code;
  }

  /** Pretends the latest code was sent long enough ago to send another. */
  async function ageCodes(signerId: string, seconds: number) {
    await app.services.orm.em
      .fork()
      .getConnection()
      .execute(`update signer_otps set created_at = created_at - make_interval(secs => ?) where signer_id = ?`, [
        seconds,
        signerId,
      ]);
  }

  const details = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data;
  /** The trail without the steps the notification queue adds when it gets to them (invites, completion mail). */
  const audit = async (clientId: string) => {
    const trail = (await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: clientId } })).body.data;
    expect(trail.events[0]).toMatchObject({ event: 'session_created', details: { by: owner.user_id } });
    return {
      ...trail,
      events: trail.events.filter((event: any) => !/^(session_created|invite_sent|completion_sent)$/.test(event.event)),
    };
  };

  it('lists the requested checks in order and refuses to sign until each has passed', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signers: [
          signerInput({
            verify_email: true,
            verify_mobile: true,
            mobile: '9876543210',
            country_code: '91',
            enforce_geofence: true,
            ...CENTRE,
            radius: 500,
          }),
        ],
      }),
    );
    const token = session.signers[0].token;
    const view = await call('GET', '/session', token);
    expect(view.body.data.checks).toEqual([
      { kind: 'email', status: 'pending', sent_to: 'a***@example.com' },
      { kind: 'mobile', status: 'pending', sent_to: '*********3210' },
      { kind: 'location', status: 'pending', source: 'device', geofence: { ...CENTRE, radius: 500 } },
    ]);
    expect(view.body.data.next_check).toBe('email');
    expect(view.body.data.signer.fields).toEqual([
      { document: 0, page: 0, x: 72, y: 600, width: expect.any(Number), height: expect.any(Number) },
    ]);

    const early = await call('POST', '/sign', token, { consent: true });
    expect(early.status).toBe(409);
    expect(early.body.message).toBe('verification_required');
    expect(early.body.errors).toEqual([
      { field: 'email', problem: 'not passed yet' },
      { field: 'mobile', problem: 'not passed yet' },
      { field: 'location', problem: 'not passed yet' },
    ]);
    // Checks go in order: the mobile code waits for the email.
    const outOfOrder = await call('POST', '/otp/send', token, { channel: 'mobile' });
    expect(outOfOrder.status).toBe(409);
    expect(outOfOrder.body.errors).toEqual([{ field: 'email', problem: 'not passed yet' }]);

    const sent = await call('POST', '/otp/send', token, { channel: 'email' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.data).toMatchObject({ channel: 'email', sent_to: 'a***@example.com' });
    const ttl = new Date(sent.body.data.expires_at).getTime() - Date.now();
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
    const verified = await call('POST', '/otp/verify', token, {
      channel: 'email',
      code: await latestCode(session.signers[0].signer_id, 'email_otp'),
    });
    expect(verified.body.data).toEqual({ channel: 'email', status: 'passed' });

    await call('POST', '/otp/send', token, { channel: 'mobile' });
    const message = (
      await app.services.orm.em.fork().find(Notification, { signer: session.signers[0].signer_id, kind: 'mobile_otp' })
    )[0];
    expect(message).toMatchObject({ channel: 'sms', recipient: '+919876543210' });
    await call('POST', '/otp/verify', token, {
      channel: 'mobile',
      code: await latestCode(session.signers[0].signer_id, 'mobile_otp'),
    });

    const there = await call('POST', '/location', token, { latitude: 12.981, longitude: 77.591, accuracy: 20 });
    expect(there.status, JSON.stringify(there.body)).toBe(200);
    expect(there.body.data).toMatchObject({
      status: 'passed',
      source: 'device',
      latitude: 12.981,
      longitude: 77.591,
      accuracy_m: 20,
    });
    expect(there.body.data.distance_m).toBeCloseTo(distanceMetres(CENTRE, { latitude: 12.981, longitude: 77.591 }), 0);

    const signed = await call('POST', '/sign', token, { consent: true });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    const read = await details(session.client_id);
    expect(read.status).toBe('completed');
    expect(read.signers[0].email_verified_at).toEqual(expect.any(String));
    expect(read.signers[0].mobile_verified_at).toEqual(expect.any(String));
    expect(read.signers[0].location).toMatchObject({ source: 'device', latitude: 12.981, longitude: 77.591, ip: '127.0.0.1' });

    const trail = await audit(session.client_id);
    expect(trail.events.map((event: any) => event.event)).toEqual([
      'otp_sent',
      'otp_verified',
      'otp_sent',
      'otp_verified',
      'location_recorded',
      'signed',
      'session_completed',
    ]);
    expect(trail.events[0].details).toEqual({ channel: 'email', sent_to: 'a***@example.com' });
    const signedEvent = trail.events.find((event: any) => event.event === 'signed');
    expect(signedEvent).toMatchObject({
      signer_id: session.signers[0].signer_id,
      ip: '127.0.0.1',
      user_agent: expect.any(String),
    });
  });

  it('keeps codes hashed, counts wrong attempts, closes a code after five, and throttles resends', async () => {
    const session = await createSession(app, owner.token, sessionBody(file, { signers: [signerInput({ verify_email: true })] }));
    const token = session.signers[0].token;
    const signerId = session.signers[0].signer_id;
    await call('POST', '/otp/send', token, { channel: 'email' });
    const code = await latestCode(signerId, 'email_otp');
    const stored = await app.services.orm.em.fork().find(SignerOtp, { signer: signerId });
    expect(stored).toHaveLength(1);
    expect(stored[0].codeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored[0].codeHash).not.toContain(code);

    const again = await call('POST', '/otp/send', token, { channel: 'email' });
    expect(again.status).toBe(429);
    expect(again.body.message).toBe('too_many_requests');
    expect(again.body.errors![0].problem).toMatch(/^a code was sent moments ago: try again in \d+ s$/);

    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    for (const left of [4, 3, 2, 1]) {
      const attempt = await call('POST', '/otp/verify', token, { channel: 'email', code: wrong });
      expect(attempt.status).toBe(400);
      expect(attempt.body.message).toBe('otp_invalid');
      expect(attempt.body.errors).toEqual([{ field: 'code', problem: `${left} attempt(s) left` }]);
    }
    const fifth = await call('POST', '/otp/verify', token, { channel: 'email', code: wrong });
    expect(fifth.status).toBe(429);
    // The right code no longer works: that code is closed.
    const late = await call('POST', '/otp/verify', token, { channel: 'email', code });
    expect(late.status).toBe(400);
    expect(late.body.errors).toEqual([{ field: 'code', problem: 'no code is open: request a new one' }]);

    await ageCodes(signerId, 31);
    expect((await call('POST', '/otp/send', token, { channel: 'email' })).status).toBe(200);
    const fresh = await latestCode(signerId, 'email_otp');
    // A malformed code is refused without costing an attempt.
    expect((await call('POST', '/otp/verify', token, { channel: 'email', code: '12ab' })).status).toBe(400);
    expect((await call('POST', '/otp/verify', token, { channel: 'email' })).body.message).toBe('missing_fields');
    expect((await call('POST', '/otp/verify', token, { channel: 'email', code: fresh })).status).toBe(200);

    // Five codes an hour at most.
    const second = await createSession(app, owner.token, sessionBody(file, { signers: [signerInput({ verify_email: true })] }));
    for (let i = 0; i < 5; i++) {
      expect((await call('POST', '/otp/send', second.signers[0].token, { channel: 'email' })).status).toBe(200);
      await ageCodes(second.signers[0].signer_id, 31);
    }
    const sixth = await call('POST', '/otp/send', second.signers[0].token, { channel: 'email' });
    expect(sixth.status).toBe(429);
    expect(sixth.body.errors![0].problem).toMatch(/^at most 5 codes an hour: try again in \d+ s$/);
  });

  it('refuses an expired code', async () => {
    const session = await createSession(app, owner.token, sessionBody(file, { signers: [signerInput({ verify_email: true })] }));
    await call('POST', '/otp/send', session.signers[0].token, { channel: 'email' });
    const code = await latestCode(session.signers[0].signer_id, 'email_otp');
    await app.services.orm.em
      .fork()
      .getConnection()
      .execute(`update signer_otps set expires_at = now() - interval '1 second' where signer_id = ?`, [
        session.signers[0].signer_id,
      ]);
    const late = await call('POST', '/otp/verify', session.signers[0].token, { channel: 'email', code });
    expect(late.status).toBe(400);
    expect(late.body).toMatchObject({
      message: 'otp_expired',
      errors: [{ field: 'code', problem: 'the code has expired: request a new one' }],
    });
  });

  it('refuses signing outside the geofence with the distance, and lets the signer retry from inside', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { signers: [signerInput({ enforce_geofence: true, ...CENTRE, radius: 1000 })] }),
    );
    const token = session.signers[0].token;
    // Mysuru is about 128 km away.
    const far = await call('POST', '/location', token, { latitude: 12.2958, longitude: 76.6394 });
    expect(far.status).toBe(403);
    expect(far.body.message).toBe('outside_geofence');
    expect(far.body.errors![0].problem).toMatch(
      /^you are 12\d\.\d km from the signing location; signing is allowed within 1\.0 km of it$/,
    );
    // Just outside and just inside the radius.
    const metresPerDegree = distanceMetres(CENTRE, { latitude: CENTRE.latitude + 1, longitude: CENTRE.longitude });
    const outside = await call('POST', '/location', token, {
      latitude: CENTRE.latitude + 1010 / metresPerDegree,
      longitude: CENTRE.longitude,
    });
    expect(outside.status).toBe(403);
    expect((await call('POST', '/sign', token, { consent: true })).status).toBe(409);
    const inside = await call('POST', '/location', token, {
      latitude: CENTRE.latitude + 990 / metresPerDegree,
      longitude: CENTRE.longitude,
    });
    expect(inside.status).toBe(200);
    expect(inside.body.data.distance_m).toBeGreaterThan(985);
    expect(inside.body.data.distance_m).toBeLessThan(995);
    expect((await call('POST', '/sign', token, { consent: true })).status).toBe(200);

    const trail = await audit(session.client_id);
    const refused = trail.events.filter((event: any) => event.event === 'location_refused');
    expect(refused).toHaveLength(2);
    expect(refused[0].details).toMatchObject({ source: 'device', latitude: 12.2958, longitude: 76.6394 });
  });

  it('validates device coordinates', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { signers: [signerInput({ verify_location: true })] }),
    );
    const token = session.signers[0].token;
    expect((await call('POST', '/location', token, {})).body).toMatchObject({
      message: 'missing_fields',
      errors: [
        { field: 'latitude', problem: 'required' },
        { field: 'longitude', problem: 'required' },
      ],
    });
    const bad = await call('POST', '/location', token, { latitude: 91, longitude: '77', accuracy: -1 });
    expect(bad.status).toBe(400);
    expect(bad.body.errors!.map((e: any) => e.field)).toEqual(['latitude', 'longitude', 'accuracy']);
    const ok = await call('POST', '/location', token, { latitude: 0, longitude: 0 });
    expect(ok.body.data).toMatchObject({ latitude: 0, longitude: 0, accuracy_m: null, distance_m: null });
    expect((await call('POST', '/location', token, { latitude: 1, longitude: 1 })).status).toBe(409);
  });

  it('records the ESP refusals of an Aadhaar signer and the failure they end in; a cancel there costs no attempt', async () => {
    const session = await createSession(app, owner.token, sessionBody(file, { sign_type: 'aadhaar', max_retry: 2 }));
    const token = session.signers[0].token;
    // The signer cancels on the ESP's pages: that costs no attempt.
    expect((await signAsAadhaar(app, token, { cancel: true })).status).toBe(409);
    for (let attempt = 0; attempt < 2; attempt++) {
      // The ESP's failed authentication (wrong OTPs until it gives up) costs one attempt here.
      const refused = await signAsAadhaar(app, token, { failAuthentication: true });
      expect(refused.status).toBe(409);
    }
    const trail = await audit(session.client_id);
    expect(
      trail.events
        .filter((event: any) => event.event !== 'viewed')
        .map((event: any) => [event.event, event.details?.attempts_left ?? null]),
    ).toEqual([
      ['esp_request_sent', null],
      ['esp_cancelled', 2],
      ['esp_request_sent', null],
      ['esp_failed', 1],
      ['esp_request_sent', null],
      ['esp_failed', 0],
      ['signer_failed', null],
    ]);
    expect((await details(session.client_id)).signers[0].status).toBe('failed');
  });

  it('records cancellation and expiry in the trail', async () => {
    const cancelled = await createSession(app, owner.token, sessionBody(file));
    await rest(app, 'POST', '/esign/cancel', {
      token: owner.token,
      json: { client_id: cancelled.client_id, reason: 'wrong file' },
    });
    expect((await audit(cancelled.client_id)).events).toEqual([
      expect.objectContaining({
        event: 'session_cancelled',
        signer_id: null,
        details: { reason: 'wrong file', by: owner.user_id },
      }),
    ]);
    const expired = await createSession(app, owner.token, sessionBody(file));
    await app.services.orm.em
      .fork()
      .getConnection()
      .execute(`update esign_sessions set expires_at = now() - interval '1 second' where id = ?`, [expired.client_id]);
    expect((await details(expired.client_id)).status).toBe('expired');
    expect((await audit(expired.client_id)).events.map((event: any) => event.event)).toEqual(['session_expired']);
  });

  it('keeps audit trails and the signer API to their owners', async () => {
    const session = await createSession(app, owner.token, sessionBody(file));
    const stranger = await app.createUser();
    const foreign = await rest<any>(app, 'GET', '/esign/audit', {
      token: stranger.token,
      query: { client_id: session.client_id },
    });
    expect(foreign.status).toBe(404);
    expect((await rest<any>(app, 'GET', '/esign/audit', { query: { client_id: session.client_id } })).status).toBe(401);
    expect((await call('POST', '/otp/send', owner.token, { channel: 'email' })).status).toBe(401);
    expect((await call('POST', '/otp/send', session.signers[0].token, { channel: 'email' })).status).toBe(409);
    expect((await call('POST', '/otp/send', session.signers[0].token, { channel: 'fax' })).status).toBe(400);
  });
});

describe('location from the IP address, behind a trusted proxy', () => {
  let app: TestApp;
  let owner: TestUser;
  let file: string;
  let locator: import('node:http').Server;
  const asked: string[] = [];

  beforeAll(async () => {
    const geo = express();
    geo.get('/ip/:ip', (req, res) => {
      asked.push(req.params.ip);
      if (req.params.ip === '203.0.113.7') res.json({ lat: 12.98, lon: 77.59 });
      else if (req.params.ip === '198.51.100.9') res.json({ latitude: 28.61, longitude: 77.21 });
      else res.status(404).json({});
    });
    locator = geo.listen(0, '127.0.0.1');
    await new Promise((resolve) => locator.once('listening', resolve));
    const port = (locator.address() as AddressInfo).port;
    app = await startTestApp({ env: { TRUST_PROXY: 'loopback', IP_GEOLOCATION_URL: `http://127.0.0.1:${port}/ip/{ip}` } });
    owner = await app.createUser();
    file = await uploadPdf(app, owner.token);
  });
  afterAll(async () => {
    await app.close();
    locator.close();
  });

  async function locate(token: string, forwardedFor?: string) {
    const response = await fetch(new URL('/signer-api/location', app.url), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
      },
      body: '{}',
    });
    return { status: response.status, body: (await response.json()) as Envelope<any> };
  }

  it('takes the forwarded address from the trusted proxy, locates it, and applies the geofence', async () => {
    const body = (extra: Record<string, unknown>) =>
      sessionBody(file, { signers: [signerInput({ verify_location: true, location_source: 'ip', ...extra })] });
    const inBengaluru = await createSession(app, owner.token, body({ enforce_geofence: true, ...CENTRE, radius: 5000 }));
    const fromDelhi = await locate(inBengaluru.signers[0].token, '198.51.100.9');
    expect(fromDelhi.status).toBe(403);
    expect(fromDelhi.body.errors![0].problem).toMatch(/^you are 17\d\d\.\d km from the signing location/);
    const local = await locate(inBengaluru.signers[0].token, '203.0.113.7');
    expect(local.status, JSON.stringify(local.body)).toBe(200);
    expect(local.body.data).toMatchObject({ source: 'ip', ip: '203.0.113.7', latitude: 12.98, longitude: 77.59 });
    expect(asked).toEqual(['198.51.100.9', '203.0.113.7']);

    // An address the provider does not know: recorded without a position; a geofence cannot be checked.
    const plain = await createSession(app, owner.token, body({}));
    const unknown = await locate(plain.signers[0].token, '192.0.2.1');
    expect(unknown.body.data).toMatchObject({ ip: '192.0.2.1', latitude: null, longitude: null });
    const fenced = await createSession(app, owner.token, body({ enforce_geofence: true, ...CENTRE, radius: 5000 }));
    const nowhere = await locate(fenced.signers[0].token, '192.0.2.1');
    expect(nowhere.status).toBe(422);
    expect(nowhere.body.message).toBe('location_unavailable');
    expect(nowhere.body.errors![0].problem).toMatch(/could not be established/);
  });
});

describe('location from the IP address without a trusted proxy', () => {
  it('ignores X-Forwarded-For and records the connection address', async () => {
    const app = await startTestApp();
    try {
      const owner = await app.createUser();
      const file = await uploadPdf(app, owner.token);
      const session = await createSession(
        app,
        owner.token,
        sessionBody(file, { signers: [signerInput({ verify_location: true, location_source: 'ip' })] }),
      );
      const response = await fetch(new URL('/signer-api/location', app.url), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${session.signers[0].token}`,
          'content-type': 'application/json',
          'x-forwarded-for': '203.0.113.7',
        },
        body: '{}',
      });
      const body = (await response.json()) as Envelope<any>;
      expect(body.data).toMatchObject({ source: 'ip', ip: '127.0.0.1', latitude: null });
    } finally {
      await app.close();
    }
  });
});
