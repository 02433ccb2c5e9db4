/**
 * The languages the service speaks to a signer in: BCP 47 primary language tags, English first. A signer's
 * `language` is one of these or null (not set); every catalog of messages has one file per tag (docs/translating.md).
 */
export const LANGUAGES = ['en', 'hi', 'bn', 'mr', 'te', 'ta', 'gu', 'kn', 'ml'] as const;
export type Language = (typeof LANGUAGES)[number];

/** What a message falls back to: a signer with no language, and a key a catalog lacks. */
export const FALLBACK_LANGUAGE: Language = 'en';

export interface LanguageInfo {
  /** The language's name in English. */
  english: string;
  /** Its name in itself. */
  native: string;
  /** The script it is written in, as Unicode names it (`\p{Script=...}`). */
  script: 'Latin' | 'Devanagari' | 'Bengali' | 'Telugu' | 'Tamil' | 'Gujarati' | 'Kannada' | 'Malayalam';
}

export const LANGUAGE_INFO: Record<Language, LanguageInfo> = {
  en: { english: 'English', native: 'English', script: 'Latin' },
  hi: { english: 'Hindi', native: 'हिन्दी', script: 'Devanagari' },
  bn: { english: 'Bengali', native: 'বাংলা', script: 'Bengali' },
  mr: { english: 'Marathi', native: 'मराठी', script: 'Devanagari' },
  te: { english: 'Telugu', native: 'తెలుగు', script: 'Telugu' },
  ta: { english: 'Tamil', native: 'தமிழ்', script: 'Tamil' },
  gu: { english: 'Gujarati', native: 'ગુજરાતી', script: 'Gujarati' },
  kn: { english: 'Kannada', native: 'ಕನ್ನಡ', script: 'Kannada' },
  ml: { english: 'Malayalam', native: 'മലയാളം', script: 'Malayalam' },
};

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

/** The language to write in: the one set, else English (a message has no browser to ask). */
export function languageOrFallback(value: string | null | undefined): Language {
  return isLanguage(value) ? value : FALLBACK_LANGUAGE;
}
