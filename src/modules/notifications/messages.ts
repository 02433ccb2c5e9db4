import { escapeHtml } from '../../platform/http/escape-html';
import { createTranslator, type Language, type MessageKey, type MessageValues } from '../../platform/i18n';
import { CATALOGS, type EnglishMessages } from './catalogs';

/** The signer's messages in every language (catalogs/, docs/translating.md). */
export const messages = createTranslator(CATALOGS);

export type NotificationMessageKey = MessageKey<EnglishMessages>;

/** Values a message chooses a branch by (`select`): given to it as they are in both forms. */
const SELECTORS = new Set(['who']);

/** One language's messages, in the two forms a message is written in. */
export interface Wording {
  language: Language;
  /** Plain text (subjects, text parts, SMS and WhatsApp): values as given. */
  text(key: NotificationMessageKey, values?: MessageValues): string;
  /**
   * HTML: the message's own words escaped, each value escaped, and markup only where the code gives it (`markup`,
   * by placeholder: a link, the code in bold). i18next-icu escapes nothing itself.
   */
  html(key: NotificationMessageKey, values?: MessageValues, markup?: Record<string, string>): string;
}

// Stand-ins for text values while the message is formatted: characters of Unicode's private use area, which
// escapeHtml leaves as they are and no message contains.
const slot = (index: number) => `\uE000${index}\uE001`;
const SLOT = /\uE000(\d+)\uE001/g;

export function wordingIn(language: Language): Wording {
  return {
    language,
    text: (key, values) => messages.t(language, key, values),
    html(key, values = {}, markup = {}) {
      const slots: string[] = [];
      const args: MessageValues = {};
      for (const [name, value] of Object.entries(values)) {
        if (typeof value !== 'string' || SELECTORS.has(name)) args[name] = value;
        else args[name] = slot(slots.push(escapeHtml(value)) - 1);
      }
      for (const [name, html] of Object.entries(markup)) args[name] = slot(slots.push(html) - 1);
      return escapeHtml(messages.t(language, key, args)).replace(SLOT, (_, index: string) => slots[Number(index)]!);
    },
  };
}
