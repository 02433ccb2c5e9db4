import IntlMessageFormat from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { CATALOGS as MESSAGE_CATALOGS } from '../../src/modules/notifications/catalogs';
import { CERTIFICATE_CATALOGS } from '../../src/modules/esign/completion/catalogs';
import { PAGE_CATALOGS } from '../../src/modules/signer-journey/page/catalogs';
import glossary from '../../src/modules/notifications/catalogs/glossary.json';
import {
  LANGUAGES,
  LANGUAGE_INFO,
  MESSAGE_FORMATS,
  REVIEW_STATES,
  flattenMessages,
  icuLocaleOf,
  missingKeys,
  type Catalog,
  type Language,
} from '../../src/platform/i18n';

/**
 * The catalogs of the signer's messages (src/modules/notifications/catalogs) and of the signing page
 * (src/modules/signer-journey/page/catalogs), docs/translating.md: every language has
 * every English key, every message parses as ICU and uses the placeholders English uses, each catalog says who wrote
 * it and how far it was reviewed, and the glossary's terms are the words the messages use.
 */
type Element = ReturnType<IntlMessageFormat['getAst']>[number];

// intl-messageformat's element types (its parser's TYPE enum).
const LITERAL = 0;
const DATE = 3;
const TIME = 4;
const SELECT = 5;
const PLURAL = 6;
const TAG = 8;

const others = LANGUAGES.filter((language) => language !== 'en');

/** Parsed as i18next-icu parses it at run time (tags are text); throws on a malformed message. */
function astOf(language: Language, message: string): Element[] {
  return new IntlMessageFormat(message, icuLocaleOf(language), MESSAGE_FORMATS, { ignoreTag: true }).getAst();
}

interface Shape {
  /** Every placeholder, with how it is formatted: `url`, `expires:date:ist`, `who:select:named|other`, `minutes:plural`. */
  placeholders: Set<string>;
  /** Plurals and selects lacking their `other` branch. */
  withoutOther: string[];
  /** The message's own words, without its placeholders. */
  literal: string;
}

function shapeOf(elements: Element[], shape: Shape = { placeholders: new Set(), withoutOther: [], literal: '' }): Shape {
  for (const element of elements as any[]) {
    if (element.type === LITERAL) shape.literal += element.value;
    else if (element.type === TAG) shapeOf(element.children, shape);
    else if (element.type === SELECT || element.type === PLURAL) {
      const kind = element.type === SELECT ? 'select' : 'plural';
      // A select's branches are its API (the code chooses them); a plural's follow the language's plural rules.
      shape.placeholders.add(
        kind === 'select'
          ? `${element.value}:select:${Object.keys(element.options).sort().join('|')}`
          : `${element.value}:plural`,
      );
      if (!element.options.other) shape.withoutOther.push(element.value);
      for (const option of Object.values(element.options) as { value: Element[] }[]) shapeOf(option.value, shape);
    } else if (element.type === DATE || element.type === TIME) {
      shape.placeholders.add(`${element.value}:${element.type === DATE ? 'date' : 'time'}:${element.style ?? ''}`);
    } else if (element.value !== undefined) shape.placeholders.add(element.value);
  }
  return shape;
}

describe.each([
  ['the signer message catalogs', MESSAGE_CATALOGS],
  ['the signing page catalogs', PAGE_CATALOGS],
  ['the certificate of completion catalogs', CERTIFICATE_CATALOGS],
] as [string, Record<Language, Catalog>][])('%s', (_name, CATALOGS) => {
  const english = flattenMessages(CATALOGS.en.messages);

  it('has a catalog for every language, English first, each naming its language', () => {
    expect(Object.keys(CATALOGS).sort()).toEqual([...LANGUAGES].sort());
    expect(LANGUAGES[0]).toBe('en');
    for (const language of LANGUAGES) {
      expect(CATALOGS[language].meta).toMatchObject({ language, name: LANGUAGE_INFO[language].english });
    }
  });

  it('lists every English key missing in another catalog, and there is none', () => {
    // A missing key renders in English (test/i18n/render.test.ts); this is where it is reported.
    const missing = Object.fromEntries(
      others.map((language) => [language, missingKeys(CATALOGS.en.messages, CATALOGS[language].messages)]),
    );
    const unknown = Object.fromEntries(
      LANGUAGES.map((language) => [
        language,
        [...flattenMessages(CATALOGS[language].messages).keys()].filter((key) => !english.has(key)),
      ]),
    );
    expect(missing).toEqual(Object.fromEntries(others.map((language) => [language, []])));
    // A key English does not have is never used: a typo, or one English has since renamed.
    expect(unknown).toEqual(Object.fromEntries(LANGUAGES.map((language) => [language, []])));
  });

  it('parses every message of every catalog with intl-messageformat (i18next-icu would send a broken one as written)', () => {
    const broken: string[] = [];
    for (const language of LANGUAGES) {
      for (const [key, message] of flattenMessages(CATALOGS[language].messages)) {
        try {
          astOf(language, message);
        } catch (error) {
          broken.push(`${language} ${key}: ${(error as Error).message}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('gives each translation the placeholders, selects and formats of its English message, in its own script', () => {
    const problems: string[] = [];
    for (const [key, source] of english) {
      const want = shapeOf(astOf('en', source));
      for (const language of LANGUAGES) {
        const message = flattenMessages(CATALOGS[language].messages).get(key);
        if (message === undefined) continue;
        let got: Shape;
        try {
          got = shapeOf(astOf(language, message));
        } catch {
          continue; // reported by the test above
        }
        if ([...got.placeholders].sort().join() !== [...want.placeholders].sort().join())
          problems.push(`${language} ${key}: placeholders ${[...got.placeholders]} instead of ${[...want.placeholders]}`);
        if (got.withoutOther.length) problems.push(`${language} ${key}: no "other" branch in ${got.withoutOther}`);
        for (const placeholder of got.placeholders) {
          // Every date and time a signer reads is India's, its zone named (platform/i18n/formats.ts).
          if (/:(date|time):/.test(placeholder) && !placeholder.endsWith(':ist'))
            problems.push(`${language} ${key}: ${placeholder} is not the ist format`);
        }
        const script = new RegExp(`\\p{Script=${LANGUAGE_INFO[language].script}}`, 'u');
        if (/\p{L}/u.test(want.literal) && !script.test(got.literal))
          problems.push(`${language} ${key}: no ${LANGUAGE_INFO[language].script} in "${message}"`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('says in each catalog who or what produced it and its review state, honestly', () => {
    for (const language of LANGUAGES) {
      const { meta } = CATALOGS[language];
      expect(meta.produced_by.length, language).toBeGreaterThan(20);
      expect(REVIEW_STATES, language).toContain(meta.review_state);
      // A catalog past its draft names who reviewed it.
      if (meta.review_state !== 'source' && meta.review_state !== 'machine-drafted, review pending')
        expect(meta.reviews.length, language).toBeGreaterThan(0);
    }
    expect(CATALOGS.en.meta.review_state).toBe('source');
    // Today every translation is an AI model's draft, unchecked: each says so.
    for (const language of others) {
      expect(CATALOGS[language].meta, language).toMatchObject({ review_state: 'machine-drafted, review pending', reviews: [] });
      expect(CATALOGS[language].meta.produced_by, language).toMatch(/AI model/);
      expect(CATALOGS[language].meta.notes, language).toMatch(/not reviewed by a native speaker or a lawyer/);
    }
    expect(glossary.meta.review_state).toBe('machine-drafted, review pending');
  });

  it('has every glossary term in every language, in its script, and the messages use them', () => {
    const problems: string[] = [];
    // The glossary's `used_in` names the messages' keys, `page_used_in` the page's.
    const usedIn = (term: { used_in: string[]; page_used_in?: string[] }) =>
      CATALOGS === MESSAGE_CATALOGS ? term.used_in : (term.page_used_in ?? []);
    const ids = glossary.terms.map((term) => term.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of [
      'sign',
      'signature',
      'document',
      'consent',
      'decline',
      'one_time_code',
      'aadhaar_esign',
      'e_stamp',
      'certificate_of_completion',
    ])
      expect(ids).toContain(id);
    for (const term of glossary.terms) {
      const translations = term.translations as Record<string, { term: string; forms: string[]; note?: string }>;
      expect(Object.keys(translations).sort(), term.id).toEqual([...LANGUAGES].sort());
      for (const language of LANGUAGES) {
        const entry = translations[language]!;
        const script = new RegExp(`\\p{Script=${LANGUAGE_INFO[language].script}}`, 'u');
        if (!script.test(entry.term))
          problems.push(`${term.id} ${language}: "${entry.term}" is not in ${LANGUAGE_INFO[language].script}`);
        if (entry.forms.length === 0) problems.push(`${term.id} ${language}: no forms`);
        for (const key of usedIn(term)) {
          if (!english.has(key)) {
            problems.push(`${term.id}: used_in names ${key}, which English does not have`);
            continue;
          }
          const normal = (text: string) => text.normalize('NFC').toLowerCase();
          const message = normal(flattenMessages(CATALOGS[language].messages).get(key) ?? '');
          if (!entry.forms.some((form) => message.includes(normal(form))))
            problems.push(`${term.id} ${language}: ${key} uses none of ${entry.forms.join(', ')}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
