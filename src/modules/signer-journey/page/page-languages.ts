import IntlMessageFormat from 'intl-messageformat';
import {
  FALLBACK_LANGUAGE,
  LANGUAGES,
  LANGUAGE_INFO,
  MESSAGE_FORMATS,
  createTranslator,
  flattenMessages,
  icuLocaleOf,
  isLanguage,
  type Language,
} from '../../../platform/i18n';
import { PAGE_CATALOGS } from './catalogs';

/** What the page fetches for one language (`/signer-assets/i18n/{language}.json`): everything it needs to speak it. */
export interface PageCatalog {
  language: Language;
  /** The locale intl-messageformat and Intl format this language's messages in. */
  locale: string;
  /** The named formats messages may use (`{when, date, ist}`), as the service's own messages. */
  formats: typeof MESSAGE_FORMATS;
  /** The language's own messages by dotted key: the ones that parse. */
  messages: Record<string, string>;
  /** English for every key the language lacks, leaves empty or writes so it does not parse (formatted as English). */
  fallback: Record<string, string>;
  /** Every language the page speaks, for the switch: each named in itself. */
  languages: { tag: Language; native: string; english: string }[];
}

const parses = (message: string, language: Language) => {
  try {
    new IntlMessageFormat(message, icuLocaleOf(language), MESSAGE_FORMATS);
    return true;
  } catch {
    return false;
  }
};

function resolve(language: Language): PageCatalog {
  const english = flattenMessages(PAGE_CATALOGS.en.messages);
  const own = flattenMessages(PAGE_CATALOGS[language].messages);
  const messages: Record<string, string> = {};
  const fallback: Record<string, string> = {};
  for (const [key, source] of english) {
    const message = own.get(key);
    if (message?.trim() && parses(message, language)) messages[key] = message;
    else fallback[key] = source;
  }
  return {
    language,
    locale: icuLocaleOf(language),
    formats: MESSAGE_FORMATS,
    messages,
    fallback,
    languages: LANGUAGES.map((tag) => ({ tag, native: LANGUAGE_INFO[tag].native, english: LANGUAGE_INFO[tag].english })),
  };
}

/** Each language's catalog as the page reads it, made once (the catalogs are read when the service starts). */
export const PAGE_CATALOG_JSON: ReadonlyMap<Language, string> = new Map(
  LANGUAGES.map((language) => [language, JSON.stringify(resolve(language))]),
);

/**
 * The language of the page's shell, from the browser's Accept-Language: the first range the page speaks by its
 * primary tag (`ta-IN;q=0.9` is Tamil), highest quality first, else English. The shell is the same for every token:
 * the signer's own language, when the sender set one, is applied by the page once it has read the session.
 */
export function shellLanguageOf(acceptLanguage: string | undefined): Language {
  if (!acceptLanguage) return FALLBACK_LANGUAGE;
  const ranges = acceptLanguage
    .split(',')
    .slice(0, 32)
    .map((part, order) => {
      const [range, ...params] = part.trim().split(';');
      const q = params.map((param) => /^\s*q=([0-9.]{1,5})\s*$/.exec(param)?.[1]).find(Boolean);
      return { primary: range.trim().toLowerCase().split('-')[0], q: q === undefined ? 1 : Number(q), order };
    })
    .filter((range) => range.q > 0)
    .sort((a, b) => b.q - a.q || a.order - b.order);
  return ranges.map((range) => range.primary).find(isLanguage) ?? FALLBACK_LANGUAGE;
}

const shellTranslator = createTranslator(PAGE_CATALOGS);

/**
 * A message of the page's catalog in `language`, for the server-rendered shell: the service's translator, which falls
 * back to English as the page's catalogs do.
 */
export function pageMessage(language: Language, key: string, values: Record<string, string> = {}): string {
  return shellTranslator.t(language, key, values);
}
