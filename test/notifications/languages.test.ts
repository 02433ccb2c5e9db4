import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Signer } from '../../src/modules/esign/esign-session.entity';
import { queueOneTimeCode } from '../../src/modules/esign/signers/signer-messages';
import { Notification } from '../../src/modules/notifications/notification.entity';
import { NotificationsDocument } from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { eventually } from '../helpers/mail';

/**
 * A signer's `language` reaches the outbox: each signer's invite (email: subject, text, HTML, MIME; WhatsApp and SMS:
 * the short form) and one-time code is written in that signer's language and script; a signer with none gets English.
 */
describe('messages in the signer’s language', () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
  });
  afterAll(async () => app.close());

  const em = () => app.services.orm.em.fork();
  const sentRows = (sessionId: string, count: number) =>
    eventually(async () => {
      const found = await em().find(Notification, { session: sessionId }, { orderBy: { recipient: 'asc', channel: 'asc' } });
      return found.length === count && found.every((row) => row.status === 'sent') && found;
    });

  it('a session with signers in Hindi and Tamil (and one with none) invites each in their language', async () => {
    const file = await uploadPdf(app, owner.token, undefined, 'lease.pdf');
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signing_order: 'parallel',
        sender: 'Priya',
        signers: [
          signerInput({
            full_name: 'अनिल शर्मा',
            email: 'anil@example.com',
            mobile: '9876543210',
            country_code: '91',
            language: 'hi',
            notification: { invite: true, whatsapp: true },
          }),
          signerInput({ full_name: 'Kavitha', email: 'kavitha@example.com', language: 'ta', notification: { invite: true } }),
          signerInput({ full_name: 'Ravi', email: 'ravi@example.com', notification: { invite: true } }),
          signerInput({
            full_name: 'Lakshmi',
            email: null,
            mobile: '9876500001',
            country_code: '91',
            language: 'ta',
            notification: { invite: true },
          }),
        ],
      }),
    );
    expect(session.signers.map((signer) => signer.language)).toEqual(['hi', 'ta', null, 'ta']);
    const rows = await sentRows(session.client_id, 5);
    const byRecipient = (recipient: string, channel = 'email') =>
      rows.find((row) => row.recipient === recipient && row.channel === channel)!;

    const hindi = byRecipient('anil@example.com');
    expect(hindi.subject).toBe('Priya आपसे “lease.pdf” पर हस्ताक्षर करने का अनुरोध करते हैं');
    expect(hindi.textBody).toContain('नमस्ते अनिल शर्मा,');
    expect(hindi.textBody).toContain(session.signers[0]!.invite_url as string);
    expect(hindi.textBody).toMatch(/IST तक काम करेगा।/);
    expect(hindi.htmlBody).toContain('<html lang="hi">');
    expect(hindi.htmlBody).toContain('देखें और हस्ताक्षर करें');
    const mail = await simpleParser(hindi.mime!);
    expect(mail.subject).toBe(hindi.subject);
    expect(mail.text).toBe(hindi.textBody);
    expect(mail.headers.get('content-language')).toBe('hi');
    const whatsapp = byRecipient('+919876543210', 'whatsapp');
    expect(whatsapp.textBody).toMatch(/^Priya आपसे “lease\.pdf” पर हस्ताक्षर करने का अनुरोध करते हैं। यहाँ हस्ताक्षर करें: /);
    expect(whatsapp.textBody).toContain(session.signers[0]!.invite_url as string);

    const tamil = byRecipient('kavitha@example.com');
    expect(tamil.subject).toBe('“lease.pdf”-இல் கையொப்பமிடுமாறு Priya உங்களைக் கேட்டுக்கொள்கிறார்');
    expect(tamil.textBody).toContain('வணக்கம் Kavitha,');
    expect(tamil.textBody).toContain(session.signers[1]!.invite_url as string);
    expect(tamil.htmlBody).toMatch(/\p{Script=Tamil}/u);
    expect((await simpleParser(tamil.mime!)).headers.get('content-language')).toBe('ta');
    const sms = byRecipient('+919876500001', 'sms');
    expect(sms.textBody).toMatch(/\p{Script=Tamil}/u);
    expect(sms.textBody).toContain(session.signers[3]!.invite_url as string);

    // Not set: English, as before.
    const english = byRecipient('ravi@example.com');
    expect(english.subject).toBe('Priya asks you to sign “lease.pdf”');
    expect(english.textBody).not.toMatch(/\p{Script=Devanagari}|\p{Script=Tamil}/u);
    expect((await simpleParser(english.mime!)).headers.get('content-language')).toBe('en');

    // The owner's outbox shows the rows as written.
    const listed = await gql(app, owner.token, NotificationsDocument, { client_id: session.client_id });
    expect(listed.data!.notifications.items.find((item) => item.recipient === 'kavitha@example.com')!.subject).toBe(
      tamil.subject,
    );
  });

  it('sends the one-time code in the signer’s language, the code in the digits it was made of', async () => {
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signers: [
          signerInput({
            email: 'otp@example.com',
            mobile: '9876543211',
            country_code: '91',
            language: 'mr',
            verify_mobile: true,
          }),
        ],
      }),
    );
    const ids = await em().transactional(async (tx) => {
      const signer = await tx.findOneOrFail(Signer, session.signers[0]!.signer_id, { populate: ['session'] });
      return queueOneTimeCode(app.services, tx, {
        session: signer.session,
        signer,
        channel: 'mobile',
        code: '482913',
        expiresAt: new Date(Date.now() + 10 * 60_000),
      });
    });
    const row = await eventually(async () => {
      const found = await em().findOneOrFail(Notification, ids[0]!);
      return found.status === 'sent' && found;
    });
    expect(row).toMatchObject({ kind: 'mobile_otp', channel: 'sms' });
    expect(row.textBody).toBe('Esign sandbox: तुमचा कोड 482913 आहे, तो 10 मिनिटांसाठी वैध आहे.');
  });
  it('tells the other signers it invited that a decline ended the request, each in their language, never the reason', async () => {
    const file = await uploadPdf(app, owner.token, undefined, 'lease.pdf');
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signing_order: 'parallel',
        signers: [
          signerInput({ full_name: 'अनिल', email: 'anil.d@example.com', language: 'hi', notification: { invite: true } }),
          signerInput({ full_name: 'Kavitha', email: 'kavitha.d@example.com', language: 'ta', notification: { invite: true } }),
          signerInput({ full_name: 'Ravi', email: 'ravi.d@example.com', notification: { invite: true } }),
          // The integrator invites this one itself: the service never wrote to her, and does not now.
          signerInput({ full_name: 'Meena', email: 'meena.d@example.com', language: 'mr' }),
        ],
      }),
    );
    const [, kavitha, ravi] = session.signers;
    expect((await signerApi(app, 'POST', '/sign', kavitha!.token as string, { consent: true })).status).toBe(200);
    const declined = await signerApi(app, 'POST', '/decline', ravi!.token as string, { reason: 'the rent is wrong' });
    expect(declined.status, JSON.stringify(declined.body)).toBe(200);

    const ended = await eventually(async () => {
      const found = await em().find(
        Notification,
        { session: session.client_id, kind: 'request_ended' },
        { orderBy: { recipient: 'asc' } },
      );
      return found.length === 2 && found.every((row) => row.status === 'sent') && found;
    });
    expect(ended.map((row) => row.recipient)).toEqual(['anil.d@example.com', 'kavitha.d@example.com']);
    const [hindi, tamil] = ended;
    expect(hindi!.subject).toBe('“lease.pdf” पर हस्ताक्षर नहीं होंगे: Ravi ने अस्वीकार किया');
    expect(hindi!.textBody).toContain('आपको कुछ नहीं करना है');
    expect((await simpleParser(hindi!.mime!)).headers.get('content-language')).toBe('hi');
    // Kavitha had signed: she reads that the document will not be completed.
    expect(tamil!.textBody).toContain('நீங்கள் அதில் கையொப்பமிட்டிருந்தீர்கள்');
    for (const row of ended) {
      expect(row.textBody).not.toContain('the rent is wrong');
      expect(row.htmlBody).not.toContain('the rent is wrong');
    }
    // The owner's notice keeps the reason.
    const ownerNotice = await em().findOneOrFail(Notification, { session: session.client_id, kind: 'session_declined' });
    expect(ownerNotice.textBody).toContain('the rent is wrong');
  });
});
