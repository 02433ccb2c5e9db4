import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEvent } from '../../src/modules/audit';
import { Notification } from '../../src/modules/notifications/notification.entity';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { eventually } from '../helpers/mail';

/**
 * What the signing page needs to speak the signer's language, over HTTP: the shell in the browser's language
 * (Accept-Language), each language's catalog, intl-messageformat and the scripts' fonts; and the signer's choice,
 * kept by POST /signer-api/language (docs/api.md), read back on the signer's and the owner's side, audited, and used
 * by the messages still to come.
 */
describe('the signing page’s languages', () => {
  let app: TestApp;
  let owner: TestUser;
  let file: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    file = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app.close());

  const get = (path: string, headers: Record<string, string> = {}) => fetch(new URL(path, app.url), { headers });
  const choose = async (token: string | null, body: unknown) => {
    const response = await fetch(new URL('/signer-api/language', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const audits = (sessionId: string) =>
    app.services.orm.em.fork().find(AuditEvent, { session: sessionId, event: 'language_chosen' }, { orderBy: { seq: 'asc' } });

  it('serves the shell in the browser’s language: the best Accept-Language range the page speaks, else English', async () => {
    const session = await createSession(app, owner.token, sessionBody(file));
    const page = `/sign/${session.signers[0]!.token}`;
    const cases: [string | undefined, string, RegExp][] = [
      [undefined, 'en', /<title>Sign a document – /],
      ['ta-IN,ta;q=0.9,en;q=0.8', 'ta', /<title>ஆவணத்தில் கையொப்பமிடுங்கள் – /],
      ['fr-FR, de;q=0.9, hi;q=0.5', 'hi', /<title>दस्तावेज़ पर हस्ताक्षर करें – /],
      ['en;q=0.4, bn;q=0.8', 'bn', /\p{Script=Bengali}/u],
      ['ml;q=0, kn', 'kn', /\p{Script=Kannada}/u],
      ['fr, de', 'en', /Skip to content/],
      ['*', 'en', /Skip to content/],
    ];
    for (const [accept, language, text] of cases) {
      const response = await get(page, accept ? { 'accept-language': accept } : {});
      const html = await response.text();
      expect(response.status, accept).toBe(200);
      expect(response.headers.get('vary'), accept).toMatch(/Accept-Language/i);
      expect(html, accept).toContain(`<html lang="${language}">`);
      expect(html, accept).toMatch(text);
      expect(html, accept).not.toMatch(/\{\{/);
    }
    const back = await (await get('/sign/return', { 'accept-language': 'gu' })).text();
    expect(back).toContain('<html lang="gu">');
    expect(back).toMatch(/\p{Script=Gujarati}/u);
  });

  it('serves each language’s catalog with English for what it lacks, intl-messageformat, and the scripts’ fonts only', async () => {
    for (const language of ['en', 'hi', 'bn', 'mr', 'te', 'ta', 'gu', 'kn', 'ml']) {
      const response = await get(`/signer-assets/i18n/${language}.json`);
      expect(response.status, language).toBe(200);
      const catalog = (await response.json()) as any;
      expect(catalog).toMatchObject({ language, locale: `${language}-IN-u-nu-latn` });
      expect(catalog.languages.map((entry: any) => entry.tag)).toEqual(['en', 'hi', 'bn', 'mr', 'te', 'ta', 'gu', 'kn', 'ml']);
      // Every key is there once: the language's own message or English's.
      const keys = [...Object.keys(catalog.messages), ...Object.keys(catalog.fallback)];
      expect(new Set(keys).size).toBe(keys.length);
      expect(keys).toContain('shell.title');
      expect(catalog.messages['language.label'], language).toBeTruthy();
    }
    for (const path of ['/signer-assets/i18n/fr.json', '/signer-assets/i18n/..%2Fen.json', '/signer-assets/i18n/en.js'])
      expect((await get(path)).status, path).toBe(404);

    const library = await get('/signer-assets/vendor/intl-messageformat.js');
    expect(library.status).toBe(200);
    expect(library.headers.get('content-type')).toMatch(/javascript/);
    expect(await library.text()).toMatch(/export \{[^}]*IntlMessageFormat/);

    const font = await get('/signer-assets/fonts/NotoSansTamil-Regular.ttf');
    expect(font.status).toBe(200);
    expect(Buffer.from(await font.arrayBuffer()).subarray(0, 4)).toEqual(Buffer.from([0, 1, 0, 0]));
    for (const path of ['/signer-assets/fonts/OFL.txt', '/signer-assets/fonts/../script-text.ts', '/signer-assets/fonts/'])
      expect((await get(path)).status, path).toBe(404);
    const css = await (await get('/signer-assets/fonts.css')).text();
    expect(css).toMatch(/unicode-range: U\+0B80-0BFF/);
  });

  it('keeps the signer’s choice: read back on both sides, audited once per change, and the next messages use it', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, { signers: [signerInput({ email: 'meena@example.com', language: 'hi', verify_email: true })] }),
    );
    const token = session.signers[0]!.token as string;
    const chosen = await choose(token, { language: ' TA ' });
    expect(chosen.status).toBe(200);
    expect(chosen.body.data.signer.language).toBe('ta');
    const details = await rest<any>(app, 'GET', '/esign/details', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    expect(details.body.data.signers[0].language).toBe('ta');
    // The same again changes nothing and records nothing.
    expect((await choose(token, { language: 'ta' })).status).toBe(200);
    expect((await audits(session.client_id)).map((event) => event.details)).toEqual([{ language: 'ta', previous: 'hi' }]);

    // The one-time code asked for after the switch is written in Tamil.
    const sent = await fetch(new URL('/signer-api/otp/send', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ channel: 'email' }),
    });
    expect(sent.status).toBe(200);
    const code = await eventually(async () =>
      (await app.services.orm.em.fork().find(Notification, { session: session.client_id })).find(
        (row) => row.recipient === 'meena@example.com' && /\p{Script=Tamil}/u.test(row.subject ?? ''),
      ),
    );
    expect(code.textBody).toMatch(/\p{Script=Tamil}/u);
  });

  it('refuses a language it does not speak (400 naming the field), none (missing_fields), and no token (401)', async () => {
    const session = await createSession(app, owner.token, sessionBody(file));
    const token = session.signers[0]!.token as string;
    for (const language of ['fr', 'hi-IN', 'Hindi', 42, ['ta']]) {
      const refused = await choose(token, { language });
      expect(refused.status, String(language)).toBe(400);
      expect(refused.body).toMatchObject({ success: false, message: 'bad_request' });
      expect(refused.body.errors).toEqual([{ field: 'language', problem: 'must be one of en, hi, bn, mr, te, ta, gu, kn, ml' }]);
    }
    for (const body of [{}, { language: '' }, { language: null }]) {
      const missing = await choose(token, body);
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ message: 'missing_fields', errors: [{ field: 'language', problem: 'required' }] });
    }
    expect((await choose(null, { language: 'ta' })).status).toBe(401);
    expect((await choose('not-a-token', { language: 'ta' })).status).toBe(401);
    const view = await fetch(new URL('/signer-api/session', app.url), { headers: { authorization: `Bearer ${token}` } });
    expect(((await view.json()) as any).data.signer.language).toBeNull();
    expect(await audits(session.client_id)).toEqual([]);
  });
});
