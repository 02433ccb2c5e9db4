/**
 * The Verhoeff check digit (dihedral group D5), which UIDAI uses for the 12th digit of an Aadhaar number,
 * and the Aadhaar number rules built on it. Verhoeff detects every single-digit error and every transposition
 * of two adjacent digits.
 *
 * Digits are processed from the rightmost one: c = D[c][P[i mod 8][digit]], where i counts from 0 at the
 * rightmost digit of the whole number (check digit included). A number is valid when c ends at 0; the check
 * digit for a payload is INV[c] computed with i counting from 1 (the check digit will take position 0).
 */

/** Multiplication table of D5: 0-4 are the rotations, 5-9 the reflections. */
const D: readonly (readonly number[])[] = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
  [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
  [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
  [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
  [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
  [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
  [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
  [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
  [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];

/** P[i] is the permutation (0 1 5 8 9 4 2 7)(3 6) applied i times. */
const P: readonly (readonly number[])[] = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
  [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
  [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
  [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
  [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
  [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
  [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];

/** Inverse of each element of D5. */
const INV: readonly number[] = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9];

const DIGITS = /^[0-9]+$/;

function verhoeffChecksum(digits: string, firstPosition: number): number {
  let c = 0;
  for (let i = 0; i < digits.length; i++) {
    const digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    c = D[c][P[(i + firstPosition) % 8][digit]];
  }
  return c;
}

/** The Verhoeff check digit to append to `digits` (one or more ASCII digits; anything else throws). */
export function verhoeffCheckDigit(digits: string): number {
  if (!DIGITS.test(digits)) throw new RangeError('verhoeffCheckDigit expects a non-empty string of digits');
  return INV[verhoeffChecksum(digits, 1)];
}

/** Whether `digits` (ASCII digits, its last one the check digit) passes the Verhoeff check. */
export function isVerhoeffValid(digits: string): boolean {
  return DIGITS.test(digits) && verhoeffChecksum(digits, 0) === 0;
}

/**
 * Accepted shapes, after trimming surrounding whitespace: 12 digits, or three groups of 4 digits separated by
 * one space or one hyphen (the same separator both times): "234123412346", "2341 2341 2346", "2341-2341-2346".
 */
const AADHAAR_SHAPE = /^([0-9]{4})([ -]?)([0-9]{4})\2([0-9]{4})$/;

/**
 * The 12 digits of an Aadhaar number without separators, or null when the input is not a valid Aadhaar number:
 * wrong shape (see above), first digit 0 or 1 (UIDAI never issues those), or a failing Verhoeff check digit.
 */
export function normalizeAadhaarNumber(input: string): string | null {
  if (typeof input !== 'string') return null;
  const match = AADHAAR_SHAPE.exec(input.trim());
  if (!match) return null;
  const digits = match[1] + match[3] + match[4];
  if (digits[0] === '0' || digits[0] === '1') return null;
  return isVerhoeffValid(digits) ? digits : null;
}

/** True only for a valid Aadhaar number (see normalizeAadhaarNumber). */
export function isValidAadhaarNumber(input: string): boolean {
  return normalizeAadhaarNumber(input) !== null;
}

/**
 * "XXXX XXXX 1234": only the last four digits are shown. Takes the 12 digits of an Aadhaar number (with or
 * without space/hyphen separators) or just its last four digits; anything else throws rather than risk
 * showing more than four digits.
 */
export function maskAadhaar(digits: string): string {
  const plain = typeof digits === 'string' ? digits.trim().replace(/[ -]/g, '') : '';
  if (!/^(?:[0-9]{4}|[0-9]{12})$/.test(plain)) throw new RangeError('maskAadhaar expects 12 digits or the last 4 digits');
  return `XXXX XXXX ${plain.slice(-4)}`;
}
