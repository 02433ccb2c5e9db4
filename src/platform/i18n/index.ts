/**
 * i18n: the languages a signer may be written to in, catalogs of ICU messages and the translator over them
 * (i18next with i18next-icu), and the formats messages share (dates in IST, rupees). It knows no message: each
 * module keeps its own catalogs (docs/translating.md).
 */
export {
  REVIEW_STATES,
  flattenMessages,
  missingKeys,
  type Catalog,
  type CatalogMeta,
  type MessageKey,
  type MessageTree,
  type ReviewState,
} from './catalog';
export { INDIA_TIME_ZONE, MESSAGE_FORMATS, displayRupees, icuLocaleOf } from './formats';
export {
  FALLBACK_LANGUAGE,
  LANGUAGES,
  LANGUAGE_INFO,
  isLanguage,
  languageOrFallback,
  type Language,
  type LanguageInfo,
} from './languages';
export { createTranslator, type MessageValues, type Translator } from './translator';
