import { describe, expect, it } from 'vitest';
import { CATALOGS } from '../../src/modules/notifications/catalogs';
import {
  brandingOf,
  renderCompletion,
  renderDeclineNotice,
  renderInvite,
  renderOneTimeCode,
  renderReminder,
  renderRequestEnded,
  type RenderedMessage,
} from '../../src/modules/notifications/render-messages';
import {
  LANGUAGES,
  LANGUAGE_INFO,
  createTranslator,
  displayRupees,
  flattenMessages,
  missingKeys,
  type Catalog,
  type Language,
  type MessageTree,
} from '../../src/platform/i18n';

/**
 * Every message a signer receives, rendered in every language: each form (subject, text, HTML, short) in the
 * language's script with every placeholder filled, values escaped in HTML only, dates in IST with the zone named;
 * and a key a catalog lacks rendered in English.
 */
const when = new Date('2026-11-22T14:05:00Z'); // 7:35 pm in India
const platform = brandingOf(null, 'Esign sandbox');
const company = brandingOf(
  { company_name: 'Acme Realty', legal_name: 'Acme Realty Pvt Ltd', support_email: 'help@acme.test' },
  'x',
);
const invite = {
  signerName: 'Asha Rao',
  filename: 'lease.pdf',
  requester: 'Priya',
  reason: 'Tenant',
  inviteUrl: 'https://esign.test/sign/tok_1',
  expiresAt: when,
};
const downloads = [
  { name: 'lease.pdf', url: 'https://esign.test/downloads/1' },
  { name: 'annex.pdf', url: 'https://esign.test/downloads/2' },
];

/** Every message of every kind, with the values each must show. */
function messagesIn(language: Language): { name: string; message: RenderedMessage; shows: string[] }[] {
  return [
    {
      name: 'invite',
      message: renderInvite(platform, invite, language),
      shows: ['lease.pdf', 'Priya', 'Tenant', invite.inviteUrl],
    },
    {
      name: 'invite without a requester',
      message: renderInvite(company, { ...invite, requester: undefined, reason: undefined }, language),
      shows: ['lease.pdf', 'Acme Realty', 'help@acme.test', invite.inviteUrl],
    },
    { name: 'reminder', message: renderReminder(platform, invite, language), shows: ['lease.pdf', 'Priya', invite.inviteUrl] },
    {
      name: 'completion, one download',
      message: renderCompletion(
        platform,
        { signerName: 'Asha Rao', filename: 'lease.pdf', downloads: downloads.slice(0, 1), linksExpireAt: when },
        language,
      ),
      shows: ['lease.pdf', downloads[0]!.url],
    },
    {
      name: 'completion, an envelope',
      message: renderCompletion(
        platform,
        { signerName: 'Asha Rao', filename: 'lease.pdf', downloads, linksExpireAt: when },
        language,
      ),
      shows: ['annex.pdf', downloads[0]!.url, downloads[1]!.url],
    },
    {
      name: 'completion, no downloads',
      message: renderCompletion(company, { signerName: 'Asha Rao', filename: 'lease.pdf' }, language),
      shows: ['lease.pdf', 'Acme Realty'],
    },
    {
      name: 'one-time code',
      message: renderOneTimeCode(platform, { filename: 'lease.pdf', code: '493817', validMinutes: 10 }, language),
      shows: ['lease.pdf', '493817', '10'],
    },
    {
      name: 'request ended, to a signer who had signed',
      message: renderRequestEnded(
        company,
        { signerName: 'Asha Rao', declinedBy: 'Vikram Singh', filename: 'lease.pdf', signed: true },
        language,
      ),
      shows: ['lease.pdf', 'Vikram Singh', 'Acme Realty'],
    },
    {
      name: 'request ended, to a signer who had not',
      message: renderRequestEnded(
        platform,
        { signerName: 'Asha Rao', declinedBy: 'Vikram Singh', filename: 'lease.pdf', signed: false },
        language,
      ),
      shows: ['lease.pdf', 'Vikram Singh'],
    },
  ];
}

describe('every signer message in every language', () => {
  for (const language of LANGUAGES) {
    it(`${language} (${LANGUAGE_INFO[language].english}): every form filled, in ${LANGUAGE_INFO[language].script}`, () => {
      const script = new RegExp(`\\p{Script=${LANGUAGE_INFO[language].script}}`, 'u');
      for (const { name, message, shows } of messagesIn(language)) {
        expect(message.language, name).toBe(language);
        for (const form of ['subject', 'text', 'html', 'short'] as const) {
          const rendered = message[form];
          expect(rendered.trim(), `${name} ${form}`).not.toBe('');
          expect(rendered, `${name} ${form}`).toMatch(script);
          // Every placeholder filled: no ICU syntax left (the values here have no braces).
          expect(rendered, `${name} ${form}`).not.toMatch(/[{}]/);
        }
        for (const value of shows) expect(message.text, `${name} text shows ${value}`).toContain(value);
        // The code stays out of the subject (lock screens), in every language.
        if (name === 'one-time code') expect(message.subject).not.toContain('493817');
        expect(message.html, name).toContain(`<html lang="${language}">`);
      }
      // Dates are India's, with the zone named, in Latin digits (no Bengali or Devanagari digits beside the URL).
      const { text, short } = renderInvite(platform, invite, language);
      expect(text).toMatch(/7:35\s?(pm|PM)/);
      expect(text).toContain('IST');
      expect(short).toContain('IST');
      expect(text).toContain('2026');
      expect(`${text}${short}`).not.toMatch(/[\u0966-\u096f\u09e6-\u09ef]/);
    });
  }

  it('keeps the English texts, the date now India time with its zone named', () => {
    const message = renderInvite(platform, invite);
    expect(message.subject).toBe('Priya asks you to sign “lease.pdf”');
    expect(message.text).toBe(
      [
        'Hello Asha Rao,',
        'Priya asks you to sign “lease.pdf”.\nReason: Tenant',
        `Open the document and sign it here:\n${invite.inviteUrl}`,
        'The link works until 22 November 2026, 7:35 pm IST. It is yours alone: do not forward this message.',
        '-- \nSent by Esign sandbox\n',
      ].join('\n\n'),
    );
    expect(message.short).toBe(
      `Priya asks you to sign “lease.pdf”. Sign here: ${invite.inviteUrl} (until 22 November 2026, 7:35 pm IST)`,
    );
    expect(renderReminder(platform, { ...invite, requester: undefined }).subject).toBe('Reminder: Please sign “lease.pdf”');
    expect(renderReminder(platform, { ...invite, requester: undefined }).short).toMatch(
      /^Reminder: Esign sandbox: You are asked to sign “lease\.pdf”\. Sign here: /,
    );
    const code = (minutes: number) =>
      renderOneTimeCode(platform, { filename: 'a.pdf', code: '111222', validMinutes: minutes }).short;
    expect(code(1)).toBe('Esign sandbox: Your code is 111222, valid 1 minute.');
    expect(code(10)).toBe('Esign sandbox: Your code is 111222, valid 10 minutes.');
    // Plurals through ICU: "the 1 other document" (it said "documents" before), "the 2 other documents".
    const envelope = (count: number) =>
      renderCompletion(platform, {
        signerName: 'A',
        filename: 'a.pdf',
        downloads: Array.from({ length: count }, (_, i) => ({ name: `${i}.pdf`, url: `https://x/${i}` })),
        linksExpireAt: when,
      });
    expect(envelope(2).text).toContain('Everyone has signed “a.pdf” and the 1 other document with it.');
    expect(envelope(3).text).toContain('Everyone has signed “a.pdf” and the 2 other documents with it.');
    expect(envelope(3).text).toContain('The links work until 22 November 2026, 7:35 pm IST.');
    expect(envelope(1).text).toContain('The link works until');
  });

  it('escapes values in the HTML form only, in every language, and keeps its own markup', () => {
    const hostile = {
      ...invite,
      signerName: 'M <b>&</b>',
      filename: `<Deal> & 'Co'.pdf`,
      requester: 'A "B"',
      reason: '<i>x</i>',
    };
    for (const language of LANGUAGES) {
      const message = renderInvite(platform, hostile, language);
      expect(message.html).not.toMatch(/<b>|<i>|<Deal>/);
      expect(message.html).toContain('M &lt;b&gt;&amp;&lt;/b&gt;');
      expect(message.html).toContain('&lt;Deal&gt; &amp; &#39;Co&#39;.pdf');
      expect(message.html).toContain('A &quot;B&quot;');
      expect(message.html).toContain(`href="${invite.inviteUrl}"`);
      expect(message.text).toContain(`<Deal> & 'Co'.pdf`);
      const code = renderOneTimeCode(platform, { filename: '<x>.pdf', code: '12<34', validMinutes: 5 }, language);
      expect(code.html).toContain('<strong style="font-size:22px;letter-spacing:3px">12&lt;34</strong>');
      const footer = renderInvite(company, invite, language).html;
      expect(footer).toContain('<a href="mailto:help@acme.test">help@acme.test</a>');
    }
  });

  it('writes the owner’s decline notice as before, in English', () => {
    expect(
      renderDeclineNotice({ signerName: 'Vikram Singh', filename: 'contract.pdf', sessionId: 'esign_1', reason: 'Wrong rent' }),
    ).toEqual({
      language: 'en',
      subject: 'Vikram Singh declined to sign contract.pdf',
      text: [
        'Vikram Singh declined to sign "contract.pdf" (session esign_1).',
        'Their reason: Wrong rent',
        'The session has ended: nobody can sign it any more, and its reserved stamps are back in your inventory.',
      ].join('\n\n'),
    });
    expect(renderDeclineNotice({ signerName: 'V', filename: 'c.pdf', sessionId: 's', reason: 'r' }, 'ta').subject).toMatch(
      /\p{Script=Tamil}/u,
    );
  });

  it('shows rupee amounts in lakhs and crores, whatever the language', () => {
    expect(displayRupees(10_000_000n)).toBe('₹1,00,000.00');
    expect(displayRupees(1_234_567_850n)).toBe('₹1,23,45,678.50');
    expect(displayRupees(5n)).toBe('₹0.05');
  });
});

describe('a key a catalog lacks', () => {
  /** `catalog` without the message at `key` (dotted). */
  function without(catalog: Catalog, key: string): Catalog {
    const messages: MessageTree = structuredClone(catalog.messages);
    const path = key.split('.');
    delete (path.slice(0, -1).reduce((tree, part) => tree[part] as MessageTree, messages) as MessageTree)[path.at(-1)!];
    return { ...catalog, messages };
  }

  it('renders in English for that key only, formats and plurals English too, and the missing-key test names it', () => {
    const hindi = without(CATALOGS.hi, 'one_time_code.code');
    const translator = createTranslator({ ...CATALOGS, hi: hindi });
    expect(missingKeys(CATALOGS.en.messages, hindi.messages)).toEqual(['one_time_code.code']);
    expect(translator.has('hi', 'one_time_code.code')).toBe(false);
    expect(translator.t('hi', 'one_time_code.code', { code: '123456', minutes: 1 })).toBe('Your code is 123456, valid 1 minute.');
    // The other keys stay Hindi.
    expect(translator.t('hi', 'one_time_code.ignore')).toBe(flattenMessages(CATALOGS.hi.messages).get('one_time_code.ignore'));
    // A whole English message, its date English too (not a Hindi month inside an English sentence).
    const until = without(CATALOGS.hi, 'invite.until');
    expect(createTranslator({ ...CATALOGS, hi: until }).t('hi', 'invite.until', { expires: when })).toBe(
      'The link works until 22 November 2026, 7:35 pm IST. It is yours alone: do not forward this message.',
    );
  });

  it('renders a message that does not parse in English too, and an empty one', () => {
    const broken: Catalog = structuredClone(CATALOGS.ta);
    (broken.messages.common as MessageTree).hello = 'வணக்கம் {name,';
    (broken.messages.common as MessageTree).open_link = ' ';
    const translator = createTranslator({ ...CATALOGS, ta: broken });
    expect(translator.t('ta', 'common.hello', { name: 'Asha' })).toBe('Hello Asha,');
    expect(translator.t('ta', 'common.open_link', { url: 'u' })).toBe('Or open this link: u');
    expect(translator.t('ta', 'common.sent_by', { brand: 'B' })).toBe('அனுப்பியவர்: B');
  });

  it('fails loudly for a key English lacks, a value left out, and an i18next option given as a value', () => {
    const translator = createTranslator(CATALOGS);
    expect(() => translator.t('hi', 'invite.nonexistent')).toThrow(/no message "invite.nonexistent" in the English catalog/);
    expect(() => translator.t('hi', 'common.hello', {})).toThrow();
    expect(() => translator.t('en', 'common.hello', { name: 'A', count: 1 })).toThrow(/i18next option/);
  });
});
