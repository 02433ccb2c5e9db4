import i18next from 'i18next';
import ICU from 'i18next-icu';
import { flattenMessages, type Catalog } from './catalog';
import { MESSAGE_FORMATS, icuLocaleOf } from './formats';
import { FALLBACK_LANGUAGE, LANGUAGES, type Language } from './languages';

/** Values a message is filled with: text, numbers (plural) and dates (`date`, `time`). */
export type MessageValues = Record<string, string | number | Date>;

export interface Translator {
  /**
   * The message `key` in `language`, its placeholders filled. A key the language's catalog lacks or leaves empty,
   * and a message of it that does not parse, is rendered in English instead, formats included (the whole message,
   * never a mixture). A key English lacks, or a value the message needs and was not given, throws.
   */
  t(language: Language, key: string, values?: MessageValues): string;
  /** Whether `language`'s own catalog has a message for `key` (English not consulted). */
  has(language: Language, key: string): boolean;
}

/** Names i18next reads as options of its own (plural suffixes, context, ...): no message value may take them. */
const RESERVED = new Set([
  'count',
  'context',
  'lng',
  'lngs',
  'ns',
  'defaultValue',
  'replace',
  'ordinal',
  'returnObjects',
  'returnDetails',
  'joinArrays',
  'postProcess',
  'interpolation',
  'keyPrefix',
  'fallbackLng',
]);

/**
 * Messages in ICU message syntax, through i18next and i18next-icu (intl-messageformat). `catalogs` must hold English;
 * the others may lack keys, which fall back to English (a test lists them: docs/translating.md).
 */
export function createTranslator(catalogs: { en: Catalog } & Partial<Record<Language, Catalog>>): Translator {
  const present = new Map<string, Set<string>>();
  for (const [language, catalog] of Object.entries(catalogs)) {
    const messages = flattenMessages(catalog!.messages);
    present.set(language, new Set([...messages].filter(([, message]) => message.trim() !== '').map(([key]) => key)));
  }
  const instance = i18next.createInstance();
  instance.use(
    new ICU({
      formats: MESSAGE_FORMATS,
      parseLngForICU: icuLocaleOf,
      // i18next-icu hands a message that does not parse back as it is written, braces and all: throw instead, so
      // that `t` renders English (and a broken English message fails loudly).
      parseErrorHandler: (error) => {
        throw error;
      },
    }),
  );
  void instance.init({
    resources: Object.fromEntries(
      Object.entries(catalogs).map(([language, catalog]) => [language, { translation: catalog!.messages }]),
    ),
    lng: FALLBACK_LANGUAGE,
    fallbackLng: FALLBACK_LANGUAGE,
    initAsync: false,
    returnEmptyString: false,
  });
  const fixed = new Map(LANGUAGES.map((language) => [language, instance.getFixedT(language)]));
  const render = (language: Language, key: string, values: MessageValues) =>
    String(fixed.get(language)!(key, values as Record<string, unknown>));
  const has = (language: Language, key: string) => present.get(language)?.has(key) ?? false;
  const inEnglish = (key: string, values: MessageValues) => {
    if (!has(FALLBACK_LANGUAGE, key)) throw new Error(`no message "${key}" in the English catalog`);
    return render(FALLBACK_LANGUAGE, key, values);
  };
  return {
    has,
    t(language, key, values = {}) {
      const reserved = Object.keys(values).find((name) => RESERVED.has(name));
      if (reserved) throw new Error(`"${reserved}" is an i18next option, not a message value (message "${key}")`);
      if (language === FALLBACK_LANGUAGE || !has(language, key)) return inEnglish(key, values);
      try {
        return render(language, key, values);
      } catch {
        return inEnglish(key, values);
      }
    },
  };
}
