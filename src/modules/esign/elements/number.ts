import { defineKind } from './element-kind';

/** `format`: `plain` (drawn as typed, the default), `integer` (whole numbers only), `indian` (1,00,000.50). */
export const NUMBER_FORMATS = ['plain', 'integer', 'indian'] as const;
const DECIMAL = /^-?\d{1,15}(\.\d{1,6})?$/;

/** A number the signer types, within `min` and `max`; kept as the decimal text given, so nothing is rounded. */
export const numberKind = defineKind({
  type: 'number',
  size: { width: 120, height: 20 },
  source: 'signer',
  widget: 'text',
  input: 'number',
  formats: NUMBER_FORMATS,
  planRules: (problems, field, input) => {
    for (const key of ['min', 'max'] as const) {
      const bound = input[key];
      if (bound !== undefined && bound !== null && !Number.isFinite(bound))
        problems.invalidField(`${field}.${key}`, 'must be a number');
    }
    if (typeof input.min === 'number' && typeof input.max === 'number' && input.min > input.max)
      problems.invalidField(`${field}.min`, 'must not be more than max');
    return { min: input.min ?? null, max: input.max ?? null };
  },
  valueProblem: (element, value) => {
    if (!DECIMAL.test(value)) return 'must be a number written with digits, an optional minus and decimal point';
    if (element.format === 'integer' && value.includes('.')) return 'must be a whole number';
    const number = Number(value);
    if (element.min !== null && element.min !== undefined && number < element.min) return `must be at least ${element.min}`;
    if (element.max !== null && element.max !== undefined && number > element.max) return `must be at most ${element.max}`;
    return null;
  },
  drawn: (element, value) => (element.format === 'indian' ? indianGrouping(value) : value),
});

/** 1234567.5 → 12,34,567.5: the last three digits, then groups of two (Intl's en-IN, with the decimals kept as typed). */
function indianGrouping(value: string): string {
  const [whole, decimals] = value.replace(/^-/, '').split('.');
  const grouped = new Intl.NumberFormat('en-IN').format(BigInt(whole));
  return `${value.startsWith('-') ? '-' : ''}${grouped}${decimals ? `.${decimals}` : ''}`;
}
