import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEvent } from '../../src/modules/audit/audit-event.entity';
import { EsignSession } from '../../src/modules/esign/esign-session.entity';
import { Signer } from '../../src/modules/esign/esign-session.entity';
import { Notification } from '../../src/modules/notifications/notification.entity';
import { queueOneTimeCode } from '../../src/modules/esign/signers/signer-messages';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { NotificationsDocument } from '../__generated__/graphql';
import { gql, rest, type Envelope } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { eventually, startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/mail';

describe('notifications over SMTP', () => {
  let smtp: TestSmtpServer;
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    app = await startTestApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: '"Esign sandbox" <no-reply@esign.test>' } });
    owner = await app.createUser();
  });
  afterAll(async () => {
    await app.close();
    await smtp.close();
  });

  const mailTo = (address: string, subject: RegExp) =>
    eventually(() => smtp.messages.find((m) => m.to.includes(address) && subject.test(m.parsed.subject ?? '')));

  async function sign(token: string) {
    const response = await fetch(new URL('/signer-api/sign', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ consent: true }),
    });
    expect(response.status, JSON.stringify(await response.clone().json())).toBe(200);
    return (await response.json()) as Envelope;
  }

  const rowsOf = (clientId: string) =>
    app.services.orm.em.fork().find(Notification, { session: clientId }, { orderBy: { createdAt: 'asc', seq: 'asc' } });

  function linkIn(mail: ReceivedMail, path: string): string {
    const match = new RegExp(`https?://\\S+${path}\\S+`).exec(mail.parsed.text ?? '');
    expect(match, mail.parsed.text).not.toBeNull();
    return match![0];
  }

  it('invites each signer in turn and sends the completed document to both, branded as the company', async () => {
    const file = await uploadPdf(app, owner.token, undefined, 'lease.pdf');
    const flags = { invite: true, completion: true, whatsapp: false };
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        sender: 'Priya from Acme',
        email_template_overrides: {
          company_name: 'Acme Realty',
          legal_name: 'Acme Realty Pvt Ltd',
          support_email: 'help@acme.test',
        },
        signers: [
          signerInput({
            full_name: 'Asha Rao',
            email: 'asha@example.com',
            reason: 'Tenant',
            mobile: '9876543210',
            country_code: '+91',
            notification: { ...flags, whatsapp: true },
          }),
          signerInput({ full_name: 'Ravi Iyer', email: 'ravi@example.com', reason: 'Landlord', notification: flags }),
        ],
      }),
    );
    const [first, second] = session.signers;

    const invite = await mailTo('asha@example.com', /asks you to sign/);
    expect(invite.user).toBe('mailer');
    expect(invite.parsed.subject).toBe('Priya from Acme asks you to sign “lease.pdf”');
    expect(invite.parsed.from?.value).toEqual([{ name: 'Acme Realty', address: 'no-reply@esign.test' }]);
    expect(invite.parsed.replyTo?.value[0].address).toBe('help@acme.test');
    expect(invite.parsed.headers.get('content-type')).toMatchObject({ value: 'multipart/alternative' });
    expect(invite.parsed.text).toContain('Hello Asha Rao');
    expect(invite.parsed.text).toContain('Reason: Tenant');
    expect(invite.parsed.text).toContain(`${app.url}/sign/${first.token}`);
    expect(invite.parsed.text).toContain('Acme Realty Pvt Ltd');
    expect(invite.parsed.html).toContain(`href="${app.url}/sign/${first.token}"`);
    expect(invite.parsed.html).toContain('Acme Realty');
    // The platform's own branding is gone from every part and header.
    for (const part of [invite.raw, invite.parsed.text ?? '', invite.parsed.html || '']) {
      expect(part).not.toMatch(/Esign sandbox/i);
    }

    // The second signer's turn has not come: nothing is even queued for them.
    let rows = await rowsOf(session.client_id);
    expect(rows.filter((row) => row.signer?.id === second.signer_id)).toHaveLength(0);
    expect(rows.map((row) => [row.kind, row.channel, row.recipient])).toEqual([
      ['invite', 'email', 'asha@example.com'],
      ['invite', 'whatsapp', '+919876543210'],
    ]);
    // Both rows were made in one transaction, at one instant: the owner's list shows them newest first, by
    // insertion order, every time.
    for (let read = 0; read < 5; read++) {
      const listed = await gql(app, owner.token, NotificationsDocument, { client_id: session.client_id });
      expect(listed.data!.notifications.items.map((item) => [item.kind, item.channel])).toEqual([
        ['invite', 'whatsapp'],
        ['invite', 'email'],
      ]);
    }

    await sign(first.token);
    const secondInvite = await mailTo('ravi@example.com', /asks you to sign/);
    expect(secondInvite.parsed.text).toContain(`${app.url}/sign/${second.token}`);
    expect(secondInvite.parsed.text).toContain('Reason: Landlord');

    await sign(second.token);
    const completions = await eventually(() => {
      const found = smtp.messages.filter((m) => m.parsed.subject === '“lease.pdf” is signed');
      return found.length === 2 && found;
    });
    expect(completions.map((m) => m.to[0]).sort()).toEqual(['asha@example.com', 'ravi@example.com']);
    const pdf = Buffer.from(await (await fetch(linkIn(completions[0], '/downloads/'))).arrayBuffer());
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const official = await rest<{ url: string }>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    const final = Buffer.from(await (await fetch(official.body.data!.url)).arrayBuffer());
    expect(pdf.equals(final)).toBe(true);
    expect(completions[0].parsed.html).toContain('/downloads/');

    rows = await eventually(async () => {
      const all = await rowsOf(session.client_id);
      return all.length === 6 && all.every((row) => row.status === 'sent') && all;
    });
    const byChannel = (channel: string) => rows.filter((row) => row.channel === channel);
    expect(byChannel('email').every((row) => row.provider === 'smtp' && row.attempts === 1 && row.sentAt && row.mime)).toBe(true);
    // WhatsApp was asked for, and no gateway is configured here: the outbox carries it.
    expect(byChannel('whatsapp').map((row) => [row.kind, row.provider])).toEqual([
      ['invite', 'outbox'],
      ['completion', 'outbox'],
    ]);
    expect(byChannel('whatsapp')[0].textBody).toContain(`${app.url}/sign/${first.token}`);

    const em = app.services.orm.em.fork();
    const signers = await em.find(Signer, { session: session.client_id }, { orderBy: { position: 'asc' } });
    expect(signers.every((signer) => signer.invitedAt instanceof Date)).toBe(true);
    expect(signers[1].invitedAt!.getTime()).toBeGreaterThan(signers[0].completedAt!.getTime() - 1);
    const audit = await em.find(AuditEvent, { session: session.client_id, event: { $in: ['invite_sent', 'completion_sent'] } });
    expect(
      audit.map((event) => `${event.event}:${event.signer?.id}:${(event.details as { channel: string }).channel}`).sort(),
    ).toEqual(
      [
        `completion_sent:${first.signer_id}:email`,
        `completion_sent:${first.signer_id}:whatsapp`,
        `completion_sent:${second.signer_id}:email`,
        `invite_sent:${first.signer_id}:email`,
        `invite_sent:${first.signer_id}:whatsapp`,
        `invite_sent:${second.signer_id}:email`,
      ].sort(),
    );
  });

  it('shows the platform branding without overrides, escapes HTML, and sends nothing unasked', async () => {
    const file = await uploadPdf(app, owner.token, undefined, "<Deal> & 'Co'.pdf");
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signers: [
          signerInput({ full_name: 'Mallory <script>alert(1)</script>', email: 'm@example.com', notification: { invite: true } }),
          signerInput({ full_name: 'Quiet', email: 'quiet@example.com', notification: { invite: false, completion: false } }),
        ],
      }),
    );
    const invite = await mailTo('m@example.com', /sign/);
    expect(invite.parsed.subject).toBe("Please sign “<Deal> & 'Co'.pdf”");
    expect(invite.parsed.from?.value).toEqual([{ name: 'Esign sandbox', address: 'no-reply@esign.test' }]);
    expect(invite.parsed.text).toContain('Sent by Esign sandbox');
    expect(invite.parsed.html).toContain('Esign sandbox');
    expect(invite.parsed.html).toContain('Mallory &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(invite.parsed.html).toContain('&lt;Deal&gt; &amp; &#39;Co&#39;.pdf');
    expect(invite.parsed.html).not.toContain('<script>');
    expect(invite.parsed.text).toContain('Mallory <script>alert(1)</script>');

    await sign(session.signers[0].token);
    await sign(session.signers[1].token);
    await eventually(
      async () => (await app.services.orm.em.fork().findOneOrFail(EsignSession, session.client_id)).status === 'completed',
    );
    // Neither the second invite nor any completion was asked for.
    expect((await rowsOf(session.client_id)).map((row) => row.kind)).toEqual(['invite']);
  });

  it('sends an email one-time code, never logs it, and keeps no copy once SMTP has it', async () => {
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        email_template_overrides: { company_name: 'Acme Realty' },
        signers: [signerInput({ email: 'otp@example.com', verify_email: true })],
      }),
    );
    const code = '493817';
    const ids = await app.services.orm.em.fork().transactional(async (tx) => {
      const signer = await tx.findOneOrFail(Signer, session.signers[0].signer_id, { populate: ['session'] });
      return queueOneTimeCode(app.services, tx, {
        session: signer.session,
        signer,
        channel: 'email',
        code,
        expiresAt: new Date(Date.now() + 10 * 60_000),
      });
    });
    expect(ids).toHaveLength(1);
    const mail = await mailTo('otp@example.com', /verification code/);
    expect(mail.parsed.text).toContain(`Your code is ${code}, valid 10 minutes.`);
    expect(mail.parsed.html).toContain(code);
    expect(mail.parsed.subject).not.toContain(code);
    expect(mail.parsed.headers.get('otp-token')).toContain(code);
    expect(mail.raw).not.toMatch(/Esign sandbox/);

    const row = await eventually(async () => {
      const found = await app.services.orm.em.fork().findOneOrFail(Notification, ids[0]);
      return found.status === 'sent' && found;
    });
    expect(row).toMatchObject({ kind: 'email_otp', provider: 'smtp', htmlBody: null, mime: null });
    expect(row.textBody).not.toContain(code);
    expect(JSON.stringify(app.logs)).not.toContain(code);
  });
});
