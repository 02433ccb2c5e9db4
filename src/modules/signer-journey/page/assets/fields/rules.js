// The service's rules of a value (src/modules/esign/elements), checked in the browser first so that a signer hears
// about a mistake before anything is sent. The service checks again and decides; these mirror it.

import { t } from '../i18n.js';

/** Characters as a reader counts them (code points), as the service does; `maxlength` would count UTF-16 units. */
const characterCount = (value) => [...value].length;

const patterns = new Map();
/** The whole value must match; the service's pattern is RE2, which browsers accept with the `u` flag. */
function wholeMatch(pattern) {
  if (!patterns.has(pattern)) {
    let regex = null;
    try {
      regex = new RegExp(`^(?:${pattern})$`, 'u');
    } catch {
      // The service refuses patterns browsers reject when they are planned; should one slip by, the service judges.
    }
    patterns.set(pattern, regex);
  }
  return patterns.get(pattern);
}

export function textProblem(field, value) {
  const length = characterCount(value);
  if (field.min_length && length < field.min_length) return t('fields.too_short', { min: field.min_length, count: length });
  if (field.max_length && length > field.max_length) return t('fields.too_long', { max: field.max_length, count: length });
  const regex = field.pattern ? wholeMatch(field.pattern) : null;
  if (regex && !regex.test(value)) return t('fields.pattern', { pattern: field.pattern });
  return null;
}

const DECIMAL = /^-?\d{1,15}(\.\d{1,6})?$/;

export function numberProblem(field, value) {
  if (!DECIMAL.test(value)) return t('fields.number_digits');
  if (field.format === 'integer' && value.includes('.')) return t('fields.number_whole');
  const number = Number(value);
  if ((field.min !== null && number < field.min) || (field.max !== null && number > field.max)) {
    if (field.min !== null && field.max !== null)
      return t('fields.number_range', { min: String(field.min), max: String(field.max) });
    return field.min !== null
      ? t('fields.number_min', { min: String(field.min) })
      : t('fields.number_max', { max: String(field.max) });
  }
  return null;
}

/** A real calendar date written YYYY-MM-DD (years 1000 to 9999), what a date input gives. */
export function dateProblem(_field, value) {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (match) {
    const [year, month, day] = match.slice(1).map(Number);
    const date = new Date(Date.UTC(year, month - 1, day));
    if (year >= 1000 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day) return null;
  }
  return t('fields.date_incomplete');
}

/** A plausible address; the service's check is stricter and has the last word. */
export const emailProblem = (_field, value) =>
  /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(value) ? null : t('fields.email_invalid', { example: 'name@example.com' });

export const optionProblem = (field, value) => (field.options?.includes(value) ? null : t('fields.choose_option'));

/**
 * The service's problem with a value (src/modules/esign/elements: `must be an email address`, ...) in the page's
 * words, or null for one the page does not know.
 */
const SERVICE_PROBLEMS = [
  [/^at least (\d+) characters$/, (m) => t('fields.service_at_least_characters', { min: Number(m[1]) })],
  [/^at most (\d+) characters$/, (m) => t('fields.service_at_most_characters', { max: Number(m[1]) })],
  [/^must match the pattern (.+)$/s, (m) => t('fields.service_pattern', { pattern: m[1] })],
  [/^must be a number written with digits/, () => t('fields.service_number')],
  [/^must be a whole number$/, () => t('fields.service_whole_number')],
  [/^must be at least (\S+)$/, (m) => t('fields.service_min', { min: m[1] })],
  [/^must be at most (\S+)$/, (m) => t('fields.service_max', { max: m[1] })],
  [/^must be ticked$/, () => t('fields.service_ticked')],
  [/^must be an email address$/, () => t('fields.service_email')],
  [/^must be a date written YYYY-MM-DD$/, () => t('fields.service_date')],
  [/^must be one of (.*)$/s, (m) => t('fields.service_option', { options: m[1] })],
];

export function serviceValueProblem(problem) {
  const text = String(problem).trim();
  for (const [pattern, say] of SERVICE_PROBLEMS) {
    const match = pattern.exec(text);
    if (match) return say(match);
  }
  return null;
}
