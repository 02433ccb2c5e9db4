import { describe, expect, it } from 'vitest';
import {
  isValidAadhaarNumber,
  isVerhoeffValid,
  maskAadhaar,
  normalizeAadhaarNumber,
  verhoeffCheckDigit,
} from '../../src/modules/signing/verhoeff';

/**
 * A reference Verhoeff built from the definitions rather than from copied tables: D5 composition written as
 * arithmetic (0-4 rotations, 5-9 reflections), the position permutation as powers of (0 1 5 8 9 4 2 7)(3 6),
 * inverses found by search. The module's hard-coded tables must agree with it on every input tried.
 */
function d5(j: number, k: number): number {
  if (j < 5) return k < 5 ? (j + k) % 5 : ((j + k) % 5) + 5;
  return k < 5 ? ((j - k + 5) % 5) + 5 : (j - k + 5) % 5;
}
const SIGMA = [1, 5, 7, 6, 2, 8, 3, 0, 9, 4];
function permute(times: number, digit: number): number {
  let x = digit;
  for (let n = 0; n < times % 8; n++) x = SIGMA[x];
  return x;
}
function referenceCheckDigit(digits: string): number {
  let c = 0;
  [...digits].reverse().forEach((ch, i) => (c = d5(c, permute(i + 1, Number(ch)))));
  for (let k = 0; k < 10; k++) if (d5(c, k) === 0) return k;
  throw new Error('no inverse');
}

/** Valid Aadhaar-shaped numbers: 11-digit prefixes (first digit 2-9) with their check digit appended. */
const PREFIXES = ['23412341234', '98765432101', '49999999999', '20000000000', '55555555555', '86203174952', '30291837465'];
const VALID = PREFIXES.map((prefix) => prefix + verhoeffCheckDigit(prefix));

describe('verhoeffCheckDigit', () => {
  it('gives the published check digits of the standard examples', () => {
    expect(verhoeffCheckDigit('236')).toBe(3); // Verhoeff's worked example: 2363
    expect(verhoeffCheckDigit('12345')).toBe(1);
    expect(verhoeffCheckDigit('142857')).toBe(0);
    expect(verhoeffCheckDigit('75872')).toBe(2);
    expect(verhoeffCheckDigit('123456789012')).toBe(0);
    expect(verhoeffCheckDigit('0')).toBe(4);
  });

  it('agrees with a reference built from the group definition', () => {
    for (let n = 0; n < 10_000; n++) {
      const s = String(n);
      expect(verhoeffCheckDigit(s), s).toBe(referenceCheckDigit(s));
    }
    let seed = 12345;
    for (let n = 0; n < 2_000; n++) {
      let s = '';
      const length = 1 + (n % 20);
      for (let i = 0; i < length; i++) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        s += String(seed % 10);
      }
      expect(verhoeffCheckDigit(s), s).toBe(referenceCheckDigit(s));
    }
  });

  it('gives the check digits of the Aadhaar prefixes used below', () => {
    expect(VALID).toEqual([
      '234123412346',
      '987654321012',
      '499999999993',
      '200000000009',
      '555555555551',
      '862031749521',
      '302918374654',
    ]);
  });

  it('refuses anything but a non-empty string of digits', () => {
    for (const bad of ['', '12a', ' 123', '12 3', '-1', '１２３']) expect(() => verhoeffCheckDigit(bad), bad).toThrow(RangeError);
  });

  it('isVerhoeffValid accepts a payload with its check digit and nothing else', () => {
    expect(isVerhoeffValid('2363')).toBe(true);
    expect(isVerhoeffValid('123451')).toBe(true);
    expect(isVerhoeffValid('1428570')).toBe(true);
    for (let d = 0; d < 10; d++) if (d !== 3) expect(isVerhoeffValid(`236${d}`)).toBe(false);
    expect(isVerhoeffValid('')).toBe(false);
    expect(isVerhoeffValid('236 3')).toBe(false);
  });
});

describe('isValidAadhaarNumber', () => {
  it('accepts valid numbers, plain or grouped by spaces or hyphens', () => {
    for (const number of VALID) {
      const groups = [number.slice(0, 4), number.slice(4, 8), number.slice(8)];
      expect(isValidAadhaarNumber(number), number).toBe(true);
      expect(isValidAadhaarNumber(groups.join(' '))).toBe(true);
      expect(isValidAadhaarNumber(groups.join('-'))).toBe(true);
      expect(isValidAadhaarNumber(` ${groups.join(' ')} `)).toBe(true);
    }
    expect(isValidAadhaarNumber('2341 2341 2346')).toBe(true);
  });

  it('detects every single-digit substitution', () => {
    for (const number of VALID) {
      for (let i = 0; i < 12; i++) {
        for (let d = 0; d < 10; d++) {
          if (String(d) === number[i]) continue;
          const changed = number.slice(0, i) + d + number.slice(i + 1);
          expect(isVerhoeffValid(changed), changed).toBe(false);
          expect(isValidAadhaarNumber(changed), changed).toBe(false);
        }
      }
    }
  });

  it('detects every transposition of two different adjacent digits', () => {
    let tried = 0;
    for (const number of VALID) {
      for (let i = 0; i < 11; i++) {
        if (number[i] === number[i + 1]) continue;
        const swapped = number.slice(0, i) + number[i + 1] + number[i] + number.slice(i + 2);
        expect(isVerhoeffValid(swapped), swapped).toBe(false);
        expect(isValidAadhaarNumber(swapped), swapped).toBe(false);
        tried++;
      }
    }
    expect(tried).toBeGreaterThan(40);
  });

  it('refuses numbers starting with 0 or 1 even when the check digit is right', () => {
    for (const prefix of ['0123456789', '1234567890', '0000000000', '1999999999']) {
      const number = `${prefix}5` + verhoeffCheckDigit(`${prefix}5`);
      expect(isVerhoeffValid(number)).toBe(true);
      expect(isValidAadhaarNumber(number), number).toBe(false);
    }
  });

  it('refuses the wrong length, letters and misplaced separators', () => {
    const eleven = '23412341234';
    const thirteen = '2341234123465';
    const bad = [
      '',
      eleven,
      `${eleven}6`.slice(1),
      thirteen,
      `${thirteen.slice(0, 12)}${verhoeffCheckDigit(thirteen.slice(0, 12))}`,
      '2341 2341 234',
      '2341 2341 23466',
      'A34123412346',
      '23412341234O',
      '2341 2341 234b',
      '234 12341 2346',
      '23412 341 2346',
      '2341 23412346',
      '23412341 2346',
      '2341  2341 2346',
      '2341 2341-2346',
      '2341-2341 2346',
      '2341.2341.2346',
      '2341/2341/2346',
      '2341_2341_2346',
      '2341\t2341\t2346',
      ' 2341 2341 2346 x',
      '+234123412346',
      '２３４１２３４１２３４６',
      '2341 2341 2346\n1',
    ];
    for (const input of bad) {
      expect(isValidAadhaarNumber(input), JSON.stringify(input)).toBe(false);
      expect(normalizeAadhaarNumber(input), JSON.stringify(input)).toBeNull();
    }
  });
});

describe('normalizeAadhaarNumber', () => {
  it('returns the 12 digits without separators', () => {
    expect(normalizeAadhaarNumber('2341 2341 2346')).toBe('234123412346');
    expect(normalizeAadhaarNumber('2341-2341-2346')).toBe('234123412346');
    expect(normalizeAadhaarNumber('  234123412346 ')).toBe('234123412346');
    for (const number of VALID) expect(normalizeAadhaarNumber(number)).toBe(number);
  });

  it('returns null for an invalid number', () => {
    expect(normalizeAadhaarNumber('2341 2341 2345')).toBeNull();
    expect(normalizeAadhaarNumber('1234 5678 9012')).toBeNull();
  });
});

describe('maskAadhaar', () => {
  it('shows only the last four digits', () => {
    expect(maskAadhaar('234123412346')).toBe('XXXX XXXX 2346');
    expect(maskAadhaar('2341 2341 2346')).toBe('XXXX XXXX 2346');
    expect(maskAadhaar('9876-5432-1012')).toBe('XXXX XXXX 1012');
    expect(maskAadhaar('1234')).toBe('XXXX XXXX 1234');
  });

  it('refuses anything that is not 12 digits or the last 4', () => {
    for (const bad of ['', '123', '12345', '23412341234', '2341234123465', 'abcd', '12a4', '2341 2341 234x']) {
      expect(() => maskAadhaar(bad), bad).toThrow(RangeError);
    }
  });
});
