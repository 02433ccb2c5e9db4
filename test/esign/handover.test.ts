/**
 * Issue 29, integrity: a signer's place handed to another person (reassign-signer, delegate) while the former
 * person's step is in flight. Whatever the order, a signature is recorded only under the person who made it: a step
 * authenticated by the old token and finishing after the hand-over committed is answered 401 and records nothing. And
 * the hand-over itself names the new person's own contact, so nothing meant for them reaches the person who left.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDueReminders } from '../../src/modules/esign/signers/send-reminders';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { createSession, formOf, postForm, sessionBody, signerInput, uploadPdf, type SessionJson } from '../helpers/factories';
import { WebhookReceiver } from '../helpers/webhook-receiver';

describe('hand-overs and the steps in flight', () => {
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;
  const receiver = new WebhookReceiver();

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  const details = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data;
  const auditOf = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: clientId } })).body.data.events as {
      event: string;
      signer_id: string | null;
      details: any;
    }[];
  const reassign = (json: Record<string, unknown>) =>
    rest<any>(app, 'POST', '/esign/reassign-signer', { token: owner.token, json });
  const webhookEvents = (clientId: string, type: string) =>
    sql<{ attributes: { signer_id: string } }>(`select attributes from webhook_events where resource_id = ? and type = ?`, [
      clientId,
      type,
    ]);
  const twoSigners = (overrides: Record<string, unknown> = {}) =>
    createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        signers: [
          signerInput({ full_name: 'Asha Rao', email: 'asha@example.com', mobile: '9876500001', country_code: '91' }),
          signerInput({ full_name: 'Vikram Singh', email: 'vikram@example.com' }),
        ],
        ...overrides,
      }),
    );

  beforeAll(async () => {
    await receiver.start();
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', ESP_SANDBOX_TIMEOUT_SECONDS: '60' } });
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
    const endpoint = await rest<any>(app, 'POST', '/webhooks/create', {
      token: owner.token,
      json: { url: receiver.url, events: ['*'] },
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
  });
  afterAll(async () => {
    await app?.close();
    await receiver.stop();
  });

  /**
   * Holds the session row as the steps do (FOR UPDATE), so that requests sent meanwhile queue behind it in the order
   * they were sent, each having read its signer (authenticated) first. `release(n)` waits until n requests wait on a
   * lock, then lets them go: PostgreSQL grants a row's lock to its waiters in turn.
   */
  async function holdingSession<T>(clientId: string, run: (release: (waiting: number) => Promise<void>) => Promise<T>) {
    const client = new pg.Client({ connectionString: app.databaseUrl });
    await client.connect();
    try {
      await client.query('begin');
      await client.query('select id from esign_sessions where id = $1 for update', [clientId]);
      return await run(async (waiting) => {
        await waiters(waiting);
        await client.query('commit');
      });
    } finally {
      await client.end();
    }
  }

  /** Until `count` of this database's connections wait on a lock (the held session row). */
  async function waiters(count: number) {
    for (;;) {
      const [row] = await sql<{ waiting: number }>(
        `select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      if (row!.waiting >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  type Step = (session: SessionJson) => Promise<{ status: number }>;
  const signFirst: Step = (session) => signerApi(app, 'POST', '/sign', session.signers[0]!.token, { consent: true });
  const reassignFirst: Step = (session) =>
    reassign({
      client_id: session.client_id,
      signer_id: session.signers[0]!.signer_id,
      full_name: 'Meera Iyer',
      email: 'meera@example.com',
    });
  const delegateFirst: Step = (session) =>
    signerApi(app, 'POST', '/delegate', session.signers[0]!.token, { full_name: 'Ravi Kumar', email: 'ravi@example.com' });

  /** Two steps queued behind the held session row in this order (`first` waits on the lock before `then` is sent). */
  const queuedInOrder = (session: SessionJson, first: Step, then: Step) =>
    holdingSession(session.client_id, async (release) => {
      const firstAnswer = first(session);
      await waiters(1);
      const thenAnswer = then(session);
      await release(2);
      return Promise.all([firstAnswer, thenAnswer]);
    });

  /** What is true whatever the order: the signature, if any, is Asha's; a hand-over that won means none was recorded. */
  async function expectOneStory(session: SessionJson, sign: { status: number }, handOver: { status: number }, newName: string) {
    const read = await details(session.client_id);
    const signed = (await auditOf(session.client_id)).filter((event) => event.event === 'signed');
    if (sign.status === 200) {
      expect(handOver.status).toBe(409);
      expect(read.signers[0]).toMatchObject({ full_name: 'Asha Rao', status: 'completed' });
      expect(signed).toHaveLength(1);
      expect(read.signer_idx).toBe(1);
    } else {
      expect(sign.status).toBe(401);
      expect(handOver.status).toBe(200);
      expect(read.signers[0]).toMatchObject({ full_name: newName, status: 'pending' });
      expect(signed).toHaveLength(0);
      expect(read.signer_idx).toBe(0);
      expect(read.current_pdf_file_id).toBe(read.file_id);
    }
    return sign.status === 200 ? 'signed' : 'handed over';
  }

  for (const [name, handOver, newName, overrides] of [
    ['reassign-signer', reassignFirst, 'Meera Iyer', {}],
    ['delegate', delegateFirst, 'Ravi Kumar', { allow_delegation: true }],
  ] as const) {
    it(`${name} that commits while the signer's signature waits on the lock: the signature is refused (401), nothing recorded`, async () => {
      for (let round = 0; round < 4; round++) {
        const session = await twoSigners(overrides);
        // The hand-over queues first; the signature, authenticated already, queues behind it.
        const [handed, sign] = await queuedInOrder(session, handOver, signFirst);
        expect(await expectOneStory(session, sign, handed, newName)).toBe('handed over');
      }
    });

    it(`${name} queued behind the signer's signature: the signature stands under the signer's name, the hand-over is 409`, async () => {
      for (let round = 0; round < 4; round++) {
        const session = await twoSigners(overrides);
        const [sign, handed] = await queuedInOrder(session, signFirst, handOver);
        expect(await expectOneStory(session, sign, handed, newName)).toBe('signed');
      }
    });

    it(`${name} racing the signer's signature, many rounds unforced: one story each time`, async () => {
      const seen = new Set<string>();
      for (let round = 0; round < 12; round++) {
        const session = await twoSigners(overrides);
        const [sign, handed] = await Promise.all([signFirst(session), handOver(session)]);
        seen.add(await expectOneStory(session, sign, handed, newName));
      }
      expect(seen.size).toBeGreaterThan(0);
    });
  }

  it('an ESP answer for the person who left is not recorded under the one who came, and costs nobody an attempt', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { sign_type: 'aadhaar', signers: [signerInput({ full_name: 'Asha Rao', max_retry: 2 })] }),
    );
    const token = session.signers[0]!.token;
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    // Asha authenticates at the ESP; its answer is held back while her place goes to Meera.
    const entry = await postForm(started.body.data.esp_url, started.body.data.fields);
    let form = formOf(entry.html, entry.url);
    const otpPage = await postForm(form.action, { ...form.fields, aadhaar: '234123412346', consent: 'yes', action: 'continue' });
    form = formOf(otpPage.html, form.action);
    const done = await postForm(form.action, { ...form.fields, otp: '123456', action: 'sign' });
    const back = formOf(done.html, done.url);

    const handed = await reassign({
      client_id: session.client_id,
      signer_id: session.signers[0]!.signer_id,
      full_name: 'Meera Iyer',
      email: 'meera@example.com',
    });
    expect(handed.status, JSON.stringify(handed.body)).toBe(200);
    await postForm(back.action, back.fields);

    const [transaction] = await sql<{ status: string; error_code: string }>(
      'select status, error_code from esp_transactions where txn = ?',
      [started.body.data.txn],
    );
    expect(transaction).toEqual({ status: 'failed', error_code: 'signer_replaced' });
    const read = await details(session.client_id);
    expect(read.status).toBe('pending');
    expect(read.signers[0]).toMatchObject({ full_name: 'Meera Iyer', status: 'pending', aadhaar_cert_details: null });
    const [signer] = await sql<{ failed_attempts: number }>('select failed_attempts from esign_signers where id = ?', [
      session.signers[0]!.signer_id,
    ]);
    expect(signer!.failed_attempts).toBe(0);
    expect((await auditOf(session.client_id)).filter((event) => event.event === 'signed')).toHaveLength(0);
  });

  it('the new person starts their own eSign at once: a transaction the former person left open is abandoned', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { sign_type: 'aadhaar', signers: [signerInput()] }),
    );
    const started = await signerApi(app, 'POST', '/esp/start', session.signers[0]!.token, { consent: true });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const handed = await reassign({
      client_id: session.client_id,
      signer_id: session.signers[0]!.signer_id,
      full_name: 'Meera Iyer',
      email: 'meera@example.com',
    });
    expect(handed.status, JSON.stringify(handed.body)).toBe(200);
    const hers = await signerApi(app, 'POST', '/esp/start', handed.body.data.signers[0].token, { consent: true });
    expect(hers.status, JSON.stringify(hers.body)).toBe(200);
    const [left] = await sql<{ status: string; error_code: string }>(
      'select status, error_code from esp_transactions where txn = ?',
      [started.body.data.txn],
    );
    expect(left).toEqual({ status: 'expired', error_code: 'esp_abandoned' });
  });

  describe('the new person’s own contact', () => {
    it('a hand-over must name an email or a mobile; nothing of the former person’s contact is kept', async () => {
      const session = await twoSigners({ allow_delegation: true });
      const [asha] = session.signers;
      const nameOnly = await reassign({ client_id: session.client_id, signer_id: asha!.signer_id, full_name: 'Meera Iyer' });
      expect(nameOnly.status).toBe(400);
      expect(nameOnly.body).toMatchObject({
        message: 'bad_request',
        errors: [{ field: 'email', problem: 'give the new person’s email or mobile (the contact is replaced whole)' }],
      });
      const delegatedNameOnly = await signerApi(app, 'POST', '/delegate', asha!.token, { full_name: 'Ravi Kumar' });
      expect(delegatedNameOnly.status).toBe(400);
      const toHerself = await signerApi(app, 'POST', '/delegate', asha!.token, {
        full_name: 'Ravi Kumar',
        email: 'ASHA@example.com',
      });
      expect(toHerself.status).toBe(400);
      expect(toHerself.body.errors).toEqual([{ field: 'email', problem: 'must be the delegate’s, not yours' }]);
      const toHerPhone = await signerApi(app, 'POST', '/delegate', asha!.token, {
        full_name: 'Ravi Kumar',
        mobile: '9876500001',
        country_code: '+91',
      });
      expect(toHerPhone.status).toBe(400);
      expect((await details(session.client_id)).signers[0]).toMatchObject({ full_name: 'Asha Rao', email: 'asha@example.com' });

      // Email only: Asha's mobile goes with her (her SMS codes must not reach her after Meera takes the place).
      const handed = await reassign({ client_id: session.client_id, signer_id: asha!.signer_id, email: 'meera@example.com' });
      expect(handed.status, JSON.stringify(handed.body)).toBe(200);
      expect(handed.body.data.signers[0]).toMatchObject({ email: 'meera@example.com', mobile: null, country_code: null });
    });

    it('a delegate is invited whatever notification.invite says, and the owner hears delegated, reassigned and reminded', async () => {
      const session = await createSession(
        app,
        owner.token,
        sessionBody(fileId, {
          allow_delegation: true,
          reminder_interval_hours: 1,
          signers: [signerInput({ full_name: 'Asha Rao', email: 'asha@example.com', notification: { invite: false } })],
        }),
      );
      const signerId = session.signers[0]!.signer_id;
      const invites = async () =>
        (
          await sql<{ recipient: string }>(
            `select recipient from notifications where signer_id = ? and kind = 'invite' order by created_at`,
            [signerId],
          )
        ).map((row) => row.recipient);
      expect(await invites()).toEqual([]);

      const delegated = await signerApi(app, 'POST', '/delegate', session.signers[0]!.token, {
        full_name: 'Ravi Kumar',
        email: 'ravi@example.com',
      });
      expect(delegated.status, JSON.stringify(delegated.body)).toBe(200);
      expect(await invites()).toEqual(['ravi@example.com']);
      expect(await webhookEvents(session.client_id, 'esign.signer.delegated')).toEqual([{ attributes: { signer_id: signerId } }]);

      // The owner reassigns an invite-off signer: the owner holds the new link (answer and event), no invite is sent.
      const reassigned = await reassign({
        client_id: session.client_id,
        signer_id: signerId,
        full_name: 'Meera Iyer',
        mobile: '9876500002',
        country_code: '91',
      });
      expect(reassigned.status, JSON.stringify(reassigned.body)).toBe(200);
      expect(await invites()).toEqual(['ravi@example.com']);
      expect(await webhookEvents(session.client_id, 'esign.signer.reassigned')).toEqual([
        { attributes: { signer_id: signerId } },
      ]);
      await receiver.waitFor(
        (received) =>
          received.some((r) => r.json.type === 'esign.signer.reassigned' && r.json.data.client_id === session.client_id),
        'the esign.signer.reassigned event',
        60_000,
      );
      const event = receiver.received.find(
        (r) => r.json.type === 'esign.signer.reassigned' && r.json.data.client_id === session.client_id,
      )!;
      expect(event.json.signer_id).toBe(signerId);
      expect(event.json.data.signers[0]).toMatchObject({
        full_name: 'Meera Iyer',
        invite_url: reassigned.body.data.signers[0].invite_url,
      });

      await sql(`update esign_signers set invited_at = now() - interval '2 hours' where id = ?`, [signerId]);
      await sql(`update esign_sessions set created_at = now() - interval '2 hours' where id = ?`, [session.client_id]);
      // The app's own reminder sweep may hold the row (SKIP LOCKED) when this one runs: whichever sweep claims it,
      // exactly one reminder is recorded, once that sweep commits.
      await sendDueReminders(app.services, app.services.orm.em.fork());
      await expect
        .poll(() => webhookEvents(session.client_id, 'esign.signer.reminded'), { timeout: 60_000 })
        .toEqual([{ attributes: { signer_id: signerId } }]);
    });
  });
});
