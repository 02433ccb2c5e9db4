// The service's rules of a value (src/modules/esign/elements), checked in the browser first so that a signer hears
// about a mistake before anything is sent. The service checks again and decides; these mirror it.

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
  if (field.min_length && length < field.min_length) return `Enter at least ${field.min_length} characters (you have ${length}).`;
  if (field.max_length && length > field.max_length) return `Enter at most ${field.max_length} characters (you have ${length}).`;
  const regex = field.pattern ? wholeMatch(field.pattern) : null;
  if (regex && !regex.test(value)) return `This does not have the expected form (${field.pattern}).`;
  return null;
}

const DECIMAL = /^-?\d{1,15}(\.\d{1,6})?$/;

export function numberProblem(field, value) {
  if (!DECIMAL.test(value)) return 'Enter a number with digits, and a decimal point if needed (up to 6 decimals).';
  if (field.format === 'integer' && value.includes('.')) return 'Enter a whole number.';
  const number = Number(value);
  const range =
    field.min !== null && field.max !== null
      ? `from ${field.min} to ${field.max}`
      : field.min !== null
        ? `of at least ${field.min}`
        : `of at most ${field.max}`;
  if ((field.min !== null && number < field.min) || (field.max !== null && number > field.max)) return `Enter a number ${range}.`;
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
  return 'Enter a complete date.';
}

/** A plausible address; the service's check is stricter and has the last word. */
export const emailProblem = (_field, value) =>
  /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(value) ? null : 'Enter an email address, like name@example.com.';

export const optionProblem = (field, value) => (field.options?.includes(value) ? null : 'Choose one of the options.');
