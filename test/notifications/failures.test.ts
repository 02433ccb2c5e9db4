import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Signer } from '../../src/modules/esign/esign-session.entity';
import { DELIVERED_CODE_TEXT } from '../../src/modules/notifications/deliver-notification';
import { Notification } from '../../src/modules/notifications/notification.entity';
import { queueOneTimeCode } from '../../src/modules/esign/signers/signer-messages';
import { SmtpProvider } from '../../src/modules/notifications/providers';
import { deliveryJobId } from '../../src/modules/notifications/queue-notifications';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { eventually, startHttpSink, startSmtpServer, type TestHttpSink, type TestSmtpServer } from '../helpers/mail';

describe('notification providers: retries, failures, HTTP gateways, TLS', () => {
  let smtp: TestSmtpServer;
  let gateway: TestHttpSink;
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    smtp.refuse = (recipient) => recipient.startsWith('bounce@');
    gateway = await startHttpSink();
    app = await startTestApp({
      env: {
        SMTP_URL: smtp.url,
        SMS_HTTP_URL: `${gateway.url}/sms`,
        SMS_HTTP_TOKEN: 'sms-token',
        WHATSAPP_HTTP_URL: `${gateway.url}/whatsapp`,
        WHATSAPP_HTTP_TOKEN: 'wa-token',
        NOTIFY_RETRY_LIMIT: '2',
        NOTIFY_RETRY_DELAY_SECONDS: '1',
        NOTIFY_TIMEOUT_MS: '3000',
      },
    });
    owner = await app.createUser();
  });
  afterAll(async () => {
    await app.close();
    await smtp.close();
    await gateway.close();
  });

  const em = () => app.services.orm.em.fork();
  const finalRow = (where: Record<string, unknown>) =>
    eventually(async () => {
      const row = await em().findOne(Notification, where);
      return row && row.status !== 'queued' && row;
    }, 30_000);
  const jobOf = async (notificationId: string) =>
    (
      await em()
        .getConnection()
        .execute<{ state: string; retry_count: number }[]>('select state, retry_count from pgboss.job where id = ?::uuid', [
          deliveryJobId(notificationId),
        ])
    )[0];

  async function session(signer: Record<string, unknown>) {
    const file = await uploadPdf(app, owner.token);
    return createSession(app, owner.token, sessionBody(file, { signers: [signerInput(signer)] }));
  }

  it('retries a refused email with backoff, records every attempt, and fails it after the last retry', async () => {
    const created = await session({ email: 'bounce@example.com', notification: { invite: true } });
    const row = await finalRow({ session: created.client_id });
    expect(row).toMatchObject({ status: 'failed', provider: 'smtp', attempts: 3, sentAt: null });
    expect(row.lastError).toMatch(/550|mailbox unavailable|rejected/i);
    expect(smtp.messages.some((m) => m.to.includes('bounce@example.com'))).toBe(false);
    // The row is marked failed in the job's transaction; pg-boss records the job's failure (and the log line is
    // written) only after the handler has thrown, so wait for them rather than read them at once.
    const job = await eventually(async () => {
      const found = await jobOf(row.id);
      return found?.state !== 'active' && found;
    });
    expect(job).toMatchObject({ state: 'failed', retry_count: 2 });
    await eventually(() => app.logs.some((line) => line.msg === 'job notifications.deliver failed'));
  });

  it('sends WhatsApp and SMS through the HTTP gateways with their bearer tokens', async () => {
    const created = await session({
      email: null,
      mobile: '9876543210',
      country_code: '91',
      verify_mobile: true,
      notification: { invite: true, whatsapp: true },
    });
    const invite = await finalRow({ session: created.client_id, kind: 'invite' });
    expect(invite).toMatchObject({ status: 'sent', provider: 'http', channel: 'whatsapp', attempts: 1 });
    const request = gateway.requests.find((r) => r.body.id === invite.id)!;
    expect(request).toMatchObject({
      path: '/whatsapp',
      authorization: 'Bearer wa-token',
      idempotencyKey: invite.id,
      body: { to: '+919876543210', channel: 'whatsapp', id: invite.id, body: invite.textBody },
    });
    expect(request.body.body).toContain(created.signers[0].invite_url as string);

    const ids = await em().transactional(async (tx) => {
      const signer = await tx.findOneOrFail(Signer, created.signers[0].signer_id, { populate: ['session'] });
      return queueOneTimeCode(app.services, tx, {
        session: signer.session,
        signer,
        channel: 'mobile',
        code: '864209',
        expiresAt: new Date(Date.now() + 5 * 60_000),
      });
    });
    expect(ids).toHaveLength(2);
    const rows = await Promise.all(ids.map((id) => finalRow({ id })));
    expect(rows.map((row) => [row.channel, row.status, row.provider, row.textBody])).toEqual([
      ['sms', 'sent', 'http', DELIVERED_CODE_TEXT],
      ['whatsapp', 'sent', 'http', DELIVERED_CODE_TEXT],
    ]);
    const sms = gateway.requests.find((r) => r.body.id === ids[0])!;
    expect(sms).toMatchObject({ path: '/sms', authorization: 'Bearer sms-token', body: { to: '+919876543210', channel: 'sms' } });
    expect(sms.body.body).toContain('Your code is 864209, valid 5 minutes.');
    expect(JSON.stringify(app.logs)).not.toContain('864209');
  });

  it('counts a gateway’s 500 as a failure and retries it', async () => {
    gateway.status = 500;
    try {
      const created = await session({ email: null, mobile: '9000000001', country_code: '44', notification: { invite: true } });
      const row = await finalRow({ session: created.client_id });
      expect(row).toMatchObject({ status: 'failed', provider: 'http', channel: 'sms', attempts: 3 });
      expect(row.lastError).toContain('HTTP 500');
      expect(gateway.requests.filter((r) => r.body.id === row.id)).toHaveLength(3);
    } finally {
      gateway.status = 200;
    }
  });

  it('does not send a one-time code that expired before it could be delivered', async () => {
    const created = await session({ email: 'late@example.com', notification: {} });
    const ids = await em().transactional(async (tx) => {
      const signer = await tx.findOneOrFail(Signer, created.signers[0].signer_id, { populate: ['session'] });
      return queueOneTimeCode(app.services, tx, {
        session: signer.session,
        signer,
        channel: 'email',
        code: '555000',
        expiresAt: new Date(Date.now() - 1000),
      });
    });
    const row = await finalRow({ id: ids[0] });
    expect(row).toMatchObject({ status: 'failed', attempts: 0 });
    expect(row.lastError).toContain('expired');
    expect(smtp.messages.some((m) => m.to.includes('late@example.com'))).toBe(false);
  });

  it('verifies the certificate a STARTTLS server offers, and can be told to require TLS', async () => {
    const tlsServer = await startSmtpServer({ starttls: true });
    const plain = await startSmtpServer();
    try {
      const message = {
        id: 'ntf_tls',
        recipient: 'tls@example.com',
        mime: 'From: a@b.test\r\nTo: tls@example.com\r\nSubject: tls\r\n\r\nhello\r\n',
      } as Notification;
      const options = { timeoutMs: 3000, requireTls: false };
      // smtp-server offers STARTTLS with a self-signed certificate: refused.
      await expect(new SmtpProvider(tlsServer.url, 'a@b.test', options).deliver(message)).rejects.toThrow(/certificate/i);
      expect(tlsServer.messages).toHaveLength(0);
      // Accepting it takes an explicit URL option.
      await new SmtpProvider(`${tlsServer.url}?tls.rejectUnauthorized=false`, 'a@b.test', options).deliver(message);
      expect(tlsServer.messages[0].parsed.subject).toBe('tls');
      // Production requires TLS: a server without STARTTLS is refused before credentials are sent.
      await expect(new SmtpProvider(plain.url, 'a@b.test', { ...options, requireTls: true }).deliver(message)).rejects.toThrow(
        /STARTTLS/i,
      );
      expect(plain.messages).toHaveLength(0);
    } finally {
      await tlsServer.close();
      await plain.close();
    }
  });
});
