// The page's words in the signer's language: ICU messages from the service's catalogs
// (src/modules/signer-journey/page/catalogs, docs/translating.md), formatted by intl-messageformat (the library the
// service formats its messages with, served as it is published). A key the language lacks comes in English, from the
// same answer, and is formatted as English.

import { IntlMessageFormat } from './vendor/intl-messageformat.js';

const ASSETS = '/signer-assets';
const loaded = new Map();
let current = null;
const compiled = new Map();

/** The languages the page speaks, each named in itself: `[{ tag, native, english }]` (from the catalog). */
export function languages() {
  return current?.languages ?? [];
}

/** The language the page speaks now (a BCP 47 tag: `en`, `hi`, ...). */
export function currentLanguage() {
  return current?.language ?? 'en';
}

/** The locale dates and numbers are written in: the language as written in India, with Latin digits. */
export function currentLocale() {
  return current?.locale ?? 'en-IN-u-nu-latn';
}

async function fetchCatalog(language) {
  if (!loaded.has(language)) {
    const request = fetch(`${ASSETS}/i18n/${encodeURIComponent(language)}.json`, { credentials: 'omit' }).then((response) => {
      if (!response.ok) throw new Error(`no catalog for ${language}`);
      return response.json();
    });
    loaded.set(language, request);
    request.catch(() => loaded.delete(language));
  }
  return loaded.get(language);
}

/**
 * Speaks `language` from now on (its catalog is fetched once): `<html lang>` follows, for screen readers and for the
 * browser's choice of fonts and line breaking. An unknown language throws; the page stays as it was.
 */
export async function useLanguage(language) {
  const catalog = await fetchCatalog(language);
  current = catalog;
  compiled.clear();
  document.documentElement.lang = catalog.language;
  return catalog.language;
}

/**
 * The language to speak before the signer chose one: theirs when the sender set it, else the first of the browser's
 * languages the page speaks (Accept-Language's order, matched by primary tag: `hi-IN` is `hi`), else English.
 */
export function preferredLanguage(signerLanguage, offered = languages().map((entry) => entry.tag)) {
  if (signerLanguage && offered.includes(signerLanguage)) return signerLanguage;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const primary = String(tag).toLowerCase().split('-')[0];
    if (offered.includes(primary)) return primary;
  }
  return 'en';
}

function formatterFor(key) {
  if (compiled.has(key)) return compiled.get(key);
  const own = current?.messages[key];
  const english = current?.fallback[key];
  let formatter = null;
  if (own !== undefined) formatter = new IntlMessageFormat(own, current.locale, current.formats);
  else if (english !== undefined) formatter = new IntlMessageFormat(english, 'en-IN-u-nu-latn', current.formats);
  if (!formatter) throw new Error(`no message "${key}" in the page's catalog`);
  compiled.set(key, formatter);
  return formatter;
}

/** The message `key` with its placeholders filled: text for textContent (never markup). */
export function t(key, values = {}) {
  return String(formatterFor(key).format(values));
}

/**
 * The message `key` as a list of strings and nodes, for a sentence with an element inside it: each tag the message
 * holds (`Contact <link>{email}</link>.`) is made by `tags[name](children)`; the words around it stay in the
 * translation's order.
 */
export function tParts(key, values = {}, tags = {}) {
  const parts = formatterFor(key).format({ ...values, ...tags });
  return (Array.isArray(parts) ? parts : [parts]).flat();
}
