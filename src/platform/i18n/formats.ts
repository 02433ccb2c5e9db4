import type { IcuFormats } from 'i18next-icu';
import type { Language } from './languages';

/** The time zone every date a signer reads is in: India Standard Time, named after the time ("7:35 pm IST"). */
export const INDIA_TIME_ZONE = 'Asia/Kolkata';

/**
 * The named formats a message may use (docs/translating.md): `{when, date, ist}` is the day in India, the month
 * written out ("22 November 2026", "22 नवंबर 2026"); `{when, time, ist}` the clock time there with the zone named
 * ("7:35 pm IST"). A message says both, in its language's order: `{expires, date, ist}, {expires, time, ist}`.
 */
export const MESSAGE_FORMATS = {
  date: { ist: { timeZone: INDIA_TIME_ZONE, day: 'numeric', month: 'long', year: 'numeric' } },
  time: { ist: { timeZone: INDIA_TIME_ZONE, hour: 'numeric', minute: '2-digit', timeZoneName: 'short' } },
} satisfies IcuFormats;

/**
 * The locale ICU formats a language's messages with: the language as written in India, in the international form
 * of Indian numerals (Latin digits, as the Constitution's article 343 has it for official use). Without `nu-latn`
 * Bengali and Marathi would print their own digits, and a one-time code or a URL beside them would not.
 */
export function icuLocaleOf(language: Language | string): string {
  return `${language}-IN-u-nu-latn`;
}

const RUPEES = new Intl.NumberFormat('en-IN', { style: 'currency', currency: 'INR' });

/**
 * An amount of paise as a signer reads it, in every language: "₹1,00,000.00", grouped in lakhs and crores. Given to a
 * message as a string value (`{amount}`), not through ICU's `number`: CLDR groups Marathi, Kannada and Malayalam
 * amounts in thousands ("₹100,000.00").
 */
export function displayRupees(paise: bigint): string {
  const negative = paise < 0n;
  const abs = negative ? -paise : paise;
  const decimal = `${negative ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
  return RUPEES.format(decimal as Intl.StringNumericLiteral);
}
