import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Signer } from '../../src/modules/esign/esign-session.entity';
import { Notification } from '../../src/modules/notifications/notification.entity';
import { notificationJobs } from '../../src/modules/notifications/notifications.jobs';
import { queueOneTimeCode } from '../../src/modules/esign/signers/signer-messages';
import { deliveryJobId, DELIVER_JOB, SWEEP_JOB } from '../../src/modules/notifications/queue-notifications';
import { User } from '../../src/modules/users/user.entity';
import { HIDDEN_CODE_TEXT } from '../../src/modules/notifications/notification.types';
import { NotificationsDocument } from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { eventually } from '../helpers/mail';

describe('notifications without providers: the outbox', () => {
  let app: TestApp;
  let owner: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    stranger = await app.createUser();
  });
  afterAll(async () => app.close());

  const em = () => app.services.orm.em.fork();
  const jobsOf = async (notificationIds: string[]) =>
    (
      await app.services.orm.em
        .getConnection()
        .execute<{ id: string }[]>("select id from pgboss.job where name = ? and id = any(string_to_array(?, ',')::uuid[])", [
          DELIVER_JOB,
          notificationIds.map(deliveryJobId).join(','),
        ])
    ).length;

  async function invitedSession(token: string, signer: Record<string, unknown> = {}) {
    const file = await uploadPdf(app, token);
    return createSession(
      app,
      token,
      sessionBody(file, { signers: [signerInput({ email: 'asha@example.com', notification: { invite: true }, ...signer })] }),
    );
  }

  it('delivers to the outbox: the row is sent by `outbox` and keeps the whole MIME message', async () => {
    const session = await invitedSession(owner.token, {
      mobile: '9876543210',
      country_code: '91',
      notification: { invite: true, whatsapp: true },
    });
    const rows = await eventually(async () => {
      const found = await em().find(Notification, { session: session.client_id }, { orderBy: { channel: 'asc' } });
      return found.length === 2 && found.every((row) => row.status === 'sent') && found;
    });
    expect(rows.map((row) => [row.channel, row.provider, row.attempts])).toEqual([
      ['email', 'outbox', 1],
      ['whatsapp', 'outbox', 1],
    ]);
    const mail = await simpleParser(rows[0].mime!);
    expect(mail.to).toMatchObject({ value: [{ address: 'asha@example.com' }] });
    expect(mail.text).toBe(rows[0].textBody);
    expect(mail.html).toBe(rows[0].htmlBody);
    expect(mail.text).toContain(session.signers[0].invite_url as string);
    expect(rows[1]).toMatchObject({ recipient: '+919876543210', mime: null, htmlBody: null, subject: null });
    expect(rows[1].textBody).toContain(session.signers[0].invite_url as string);
    expect(rows[1].textBody.length).toBeLessThan(400);
  });

  it('SMS stands in when a signer has only a mobile and no WhatsApp', async () => {
    const session = await invitedSession(owner.token, { email: null, mobile: '9876500000', country_code: '+1' });
    const row = await eventually(async () => {
      const found = await em().findOne(Notification, { session: session.client_id });
      return found?.status === 'sent' && found;
    });
    expect(row).toMatchObject({ channel: 'sms', recipient: '+19876500000', provider: 'outbox' });
  });

  it('sends nothing for a decision that rolls back, and nothing before a decision commits', async () => {
    const session = await invitedSession(owner.token, {
      notification: { invite: false },
      mobile: '9876543210',
      country_code: '91',
    });
    const load = async (tx: ReturnType<typeof em>) => {
      const signer = await tx.findOneOrFail(Signer, session.signers[0].signer_id, { populate: ['session'] });
      return {
        session: signer.session,
        signer,
        channel: 'mobile' as const,
        code: '111222',
        expiresAt: new Date(Date.now() + 600_000),
      };
    };

    let queued: string[] = [];
    await expect(
      em().transactional(async (tx) => {
        queued = await queueOneTimeCode(app.services, tx, await load(tx));
        expect(queued).toHaveLength(1);
        throw new Error('the check failed after all');
      }),
    ).rejects.toThrow('the check failed after all');
    expect(await em().count(Notification, { id: queued })).toBe(0);
    expect(await jobsOf(queued)).toBe(0);

    // Committed: the job exists only from the commit on, next to its row.
    const ids = await em().transactional(async (tx) => {
      const inside = await queueOneTimeCode(app.services, tx, await load(tx));
      expect(await jobsOf(inside)).toBe(0); // another connection cannot see it yet
      return inside;
    });
    expect(await jobsOf(ids)).toBe(1);
    const row = await eventually(async () => {
      const found = await em().findOneOrFail(Notification, ids[0]);
      return found.status === 'sent' && found;
    });
    // The outbox is the delivery here, so it keeps the code (the sandbox reads it there).
    expect(row).toMatchObject({ kind: 'mobile_otp', channel: 'sms', provider: 'outbox' });
    expect(row.textBody).toContain('Your code is 111222, valid 10 minutes.');
  });

  it('the sweep re-sends a row whose job was lost, once, and fails one-time codes it is too late for', async () => {
    const session = await invitedSession(owner.token, { notification: { invite: false } });
    const tx = em();
    const lost = tx.create(Notification, {
      user: tx.getReference(User, owner.user_id),
      session: session.client_id,
      kind: 'invite',
      channel: 'sms',
      recipient: '+15550000',
      textBody: 'an invite whose job never made it',
      createdAt: new Date(Date.now() - 5 * 60_000),
    });
    const stale = tx.create(Notification, {
      user: tx.getReference(User, owner.user_id),
      session: session.client_id,
      kind: 'mobile_otp',
      channel: 'sms',
      recipient: '+15550000',
      textBody: 'Your code is 000000',
      createdAt: new Date(Date.now() - 60 * 60_000),
    });
    await tx.flush();
    const sweep = notificationJobs.find((job) => job.name === SWEEP_JOB)!;
    await sweep.handle(app.services, {}, {} as never);
    await sweep.handle(app.services, {}, {} as never);
    expect(await jobsOf([lost.id])).toBe(1);
    expect(await jobsOf([stale.id])).toBe(0);
    await eventually(async () => (await em().findOneOrFail(Notification, lost.id)).status === 'sent');
    expect(await em().findOneOrFail(Notification, stale.id)).toMatchObject({ status: 'failed', attempts: 0 });
  });

  it('GraphQL `notifications`: the owner’s rows only, a foreign session is not_found, codes shown in a sandbox', async () => {
    const mine = await invitedSession(owner.token);
    const theirs = await invitedSession(stranger.token, { email: 'theirs@example.com' });
    await eventually(
      async () => (await em().count(Notification, { session: [mine.client_id, theirs.client_id], status: 'sent' })) === 2,
    );

    const all = await gql(app, owner.token, NotificationsDocument, { page: 1, size: 100 });
    expect(all.errors).toBeUndefined();
    const items = all.data!.notifications.items;
    expect(items.length).toBeGreaterThan(3);
    expect(items.some((item) => item.client_id === theirs.client_id)).toBe(false);
    expect(await em().count(Notification, { user: owner.user_id })).toBe(items.length);

    const one = await gql(app, owner.token, NotificationsDocument, { page: 1, size: 10, client_id: mine.client_id });
    expect(one.data!.notifications).toMatchObject({
      has_next: false,
      items: [
        {
          kind: 'invite',
          channel: 'email',
          recipient: 'asha@example.com',
          status: 'sent',
          provider: 'outbox',
          attempts: 1,
          signer_id: mine.signers[0].signer_id,
          client_id: mine.client_id,
        },
      ],
    });
    expect(one.data!.notifications.items[0].mime).toContain('Content-Type: multipart/alternative');
    expect(one.data!.notifications.items[0].html_body).toContain('<html lang="en">');

    const foreign = await gql(app, owner.token, NotificationsDocument, { page: 1, size: 10, client_id: theirs.client_id });
    expect(foreign.errors?.[0].extensions?.code).toBe('not_found');
    const strangers = await gql(app, stranger.token, NotificationsDocument, { page: 1, size: 10 });
    expect(strangers.data!.notifications.items.map((item) => item.client_id)).toEqual([theirs.client_id]);
    expect((await gql(app, null, NotificationsDocument, { page: 1, size: 10 })).status).toBe(401);
    expect((await gql(app, owner.token, NotificationsDocument, { page: 1, size: 500 })).errors?.[0].extensions?.code).toBe(
      'bad_request',
    );

    // A sandbox shows one-time codes as the outbox holds them: an integrator reads them here (production: below).
    const codes = items.filter((item) => item.kind === 'mobile_otp');
    expect(codes.length).toBeGreaterThan(0);
    for (const item of codes) {
      const row = await em().findOneOrFail(Notification, item.id);
      expect(row.textBody).toMatch(/Your code is \d{6}/);
      expect(item.text_body).toBe(row.textBody);
    }

    // Paging: newest first, one at a time.
    const first = await gql(app, owner.token, NotificationsDocument, { page: 1, size: 1 });
    expect(first.data!.notifications).toMatchObject({ has_next: true, items: [{ id: items[0].id }] });
  });

  it('is not a REST route', async () => {
    const response = await fetch(new URL('/api/v1/notifications?page=1&size=10', app.url), {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(response.status).toBe(404);
  });
});

describe('the outbox in production: one-time codes are never shown', () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp({
      env: {
        APP_ENV: 'production',
        URL_SIGNING_SECRET: 'a-production-url-signing-secret',
        SECRETS_ENCRYPTION_KEY: 'a-production-secrets-encryption-key',
        TSA_URL: 'http://127.0.0.1:9/tsa',
        PLATFORM_SIGNING_PFX: '/nonexistent/platform.p12',
        ALLOW_SANDBOX_ESP: 'true',
        ALLOW_SIMULATED_VENDOR: 'true',
      },
    });
    owner = await app.createUser();
  });
  afterAll(async () => app?.close());

  it('the owner reads that a code was sent, never the code: not in the outbox, the signer API’s answers or the logs', async () => {
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signers: [
          signerInput({
            email: 'asha@example.com',
            verify_email: true,
            verify_mobile: true,
            mobile: '9876543210',
            country_code: '91',
          }),
        ],
      }),
    );
    const signer = session.signers[0];
    const answers: string[] = [];
    const signerApi = async (path: string, json: unknown) => {
      const response = await fetch(new URL(`/signer-api${path}`, app.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${signer.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(json),
      });
      const text = await response.text();
      answers.push(text);
      return { status: response.status, text };
    };
    // No provider is configured, so the outbox row is the delivery and keeps the code (as in a sandbox).
    const codeOf = async (kind: 'email_otp' | 'mobile_otp') => {
      const row = await eventually(async () => {
        const found = await em().findOne(Notification, { signer: signer.signer_id, kind });
        return found?.status === 'sent' && found;
      });
      expect(row.provider).toBe('outbox');
      return /Your code is (\d{6})/.exec(row.textBody)![1];
    };
    const em = () => app.services.orm.em.fork();

    expect((await signerApi('/otp/send', { channel: 'email' })).status).toBe(200);
    const emailCode = await codeOf('email_otp');
    expect((await signerApi('/otp/verify', { channel: 'email', code: emailCode })).status).toBe(200);
    expect((await signerApi('/otp/send', { channel: 'mobile' })).status).toBe(200);
    const mobileCode = await codeOf('mobile_otp');

    const outbox = await gql(app, owner.token, NotificationsDocument, { page: 1, size: 50, client_id: session.client_id });
    expect(outbox.errors).toBeUndefined();
    const codes = outbox.data!.notifications.items.filter((item) => item.kind.endsWith('_otp'));
    expect(codes.map((item) => [item.kind, item.text_body, item.html_body, item.mime])).toEqual([
      ['mobile_otp', HIDDEN_CODE_TEXT, null, null],
      ['email_otp', HIDDEN_CODE_TEXT, null, null],
    ]);
    const everything = [JSON.stringify(outbox), ...answers, JSON.stringify(app.logs)].join('\n');
    for (const code of [emailCode, mobileCode]) expect(everything).not.toContain(code);
  });
});
