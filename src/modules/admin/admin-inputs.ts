import { parseRupees } from '../../platform/money';
import { isAbsent, text, type Problems } from '../../platform/validation/problems';

/** A user id as the admin operations take it: required; an unknown one is `404 not_found` further on. */
export function subjectUserId(problems: Problems, value: string | null | undefined): string | undefined {
  return text(problems, 'user_id', value, 64, true);
}

/**
 * Rupees (a number or a decimal string, see platform/graphql/rupees.ts) into paise, within `range` (paise);
 * anything else (signs, exponents, a third decimal, out of range) is a problem of `field`.
 */
export function rupeesField(
  problems: Problems,
  field: string,
  value: string | number | null | undefined,
  range: { min: bigint; max: bigint; wording: string },
  required = false,
): bigint | undefined {
  if (isAbsent(value)) {
    if (required) problems.missingField(field);
    return undefined;
  }
  const paise = parseRupees(value!);
  if (paise === null || paise < range.min || paise > range.max) {
    problems.invalidField(field, `${range.wording}, at most 2 decimals`);
    return undefined;
  }
  return paise;
}
