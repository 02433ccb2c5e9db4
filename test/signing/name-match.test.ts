import { describe, expect, it } from 'vitest';
import { MAX_NAME_LENGTH, NAME_MATCH_PASS_SCORE, nameMatchScore } from '../../src/modules/signing/name-match';

interface Case {
  a: string;
  b: string;
  /** Inclusive bounds for nameMatchScore(a, b). */
  min: number;
  max: number;
}

const exactly = (a: string, b: string, score: number): Case => ({ a, b, min: score, max: score });
const between = (a: string, b: string, min: number, max: number): Case => ({ a, b, min, max });

const CASES: Record<string, Case[]> = {
  'case, whitespace and punctuation': [
    exactly('ASHA  RAO.', 'asha rao', 100),
    exactly('  Asha\tRao ', 'ASHA RAO', 100),
    exactly('Asha, Rao!', 'asha rao', 100),
    exactly('Asha-Rao', 'asha rao', 100),
  ],
  'word order': [
    between('Rao Asha', 'Asha Rao', 95, 100),
    between('Sharma Ravi Kumar', 'Ravi Kumar Sharma', 95, 100),
    between('RAO, ASHA', 'asha rao', 95, 100),
  ],
  honorifics: [
    exactly('Mr Ravi Sharma', 'Ravi Sharma', 100),
    exactly('Mrs. Asha Rao', 'Asha Rao', 100),
    exactly('Ms Asha Rao', 'Asha Rao', 100),
    exactly('Miss Asha Rao', 'Asha Rao', 100),
    exactly('Dr. Asha Rao', 'Asha Rao', 100),
    exactly('Dr Asha Rao', 'Asha Rao', 100),
    exactly('Shri Ravi Sharma', 'Ravi Sharma', 100),
    exactly('Sri Ravi Sharma', 'Ravi Sharma', 100),
    exactly('Smt. Asha Rao', 'Asha Rao', 100),
    exactly('SMT ASHA RAO', 'Mrs Asha Rao', 100),
    exactly('Kumari Asha Rao', 'Asha Rao', 100),
    exactly('Km. Asha Rao', 'Asha Rao', 100),
    exactly('Prof. Ravi Sharma', 'Ravi Sharma', 100),
    exactly('Late Shri Ravi Kumar Sharma', 'Ravi Kumar Sharma', 100),
    exactly('Dr. (Smt.) Asha Rao', 'Asha Rao', 100),
  ],
  'honorific-like words after the first name are kept': [
    // "Kumari" is a common surname in North India; only the leading run of honorifics is dropped.
    exactly('Sunita Kumari', 'Sunita', 67),
    exactly('Kumari Sunita Kumari', 'Sunita Kumari', 100),
  ],
  initials: [
    exactly('A. Rao', 'Asha Rao', 90),
    exactly('A Rao', 'Asha Rao', 90),
    exactly('Rao A.', 'Asha Rao', 90),
    exactly('R. K. Sharma', 'Ravi Kumar Sharma', 87),
    exactly('R.K. Sharma', 'Ravi Kumar Sharma', 87),
    exactly('RK Sharma', 'Ravi Kumar Sharma', 87),
    exactly('A', 'Asha', 80),
    exactly('A Rao', 'A Rao', 100),
    between('R. K. Sharma', 'Ravi Sharma', 60, 79),
    between('B. Rao', 'Asha Rao', 40, 60),
  ],
  'transliteration and typing variants': [
    between('Mohammed Iqbal', 'Mohammad Iqbal', 85, 99),
    between('Muhammad Iqbal', 'Mohammed Iqbal', 85, 99),
    between('Md. Iqbal', 'Mohammed Iqbal', 85, 99),
    between('Mohd Iqbal', 'Mohammad Iqbal', 85, 99),
    between('Srinivasan', 'Sreenivasan', 80, 99),
    between('Lakshmi Narayanan', 'Laxmi Narayanan', 85, 99),
    between('Gaurav Gupta', 'Gourav Gupta', 85, 99),
    between('Siddharth Rao', 'Sidharth Rao', 85, 99),
    between('Amith Kumar', 'Amit Kumar', 85, 99),
    between('Pooja Verma', 'Puja Verma', 85, 99),
    between('Shiva Kumar', 'Siva Kumar', 85, 99),
    between('Wasim Akram', 'Vasim Akram', 85, 99),
    between('Iqbal Khan', 'Ikbal Khan', 85, 99),
    between('Sanjay Dutt', 'Sanjai Dutt', 85, 99),
    between('Subramaniam', 'Subramanian', 85, 99),
  ],
  'diacritics and letters outside ASCII': [
    exactly('José', 'Jose', 100),
    exactly('José Fernandes', 'JOSE FERNANDES', 100),
    exactly('Zoë Müller', 'Zoe Muller', 100),
    exactly('Søren Ørsted', 'Soren Orsted', 100),
  ],
  'joined and split words': [
    exactly('Ravi Kumar', 'Ravikumar', 100),
    exactly("Maria D'Souza", 'Maria D Souza', 100),
    exactly('Maria DSouza', 'Maria D Souza', 100),
    between('Ravi Kumaar', 'Ravikumar', 90, 99),
  ],
  'missing names': [
    exactly('Ravi Sharma', 'Ravi Kumar Sharma', 80),
    between('Asha', 'Asha Rao', 60, 69),
    between('Asha Rao', 'Asha Devi Rao', 70, 100),
  ],
  'different people': [
    between('Asha Rao', 'Vikram Singh', 0, 30),
    between('Asha Rao', 'Asha Verma', 31, 69),
    between('Asha Rao', 'Usha Rao', 31, 69),
    between('Meena Rao', 'Mona Rao', 31, 69),
    between('Ramesh Kumar', 'Rakesh Kumar', 31, 69),
    between('Anil Rao', 'Asha Rao', 31, 69),
    between('Kumar', 'Kumari', 0, 30),
    between('Rao', 'Rai', 0, 30),
    between('Priya', 'Vikram', 0, 30),
    between('Mahesh Gupta', 'Ramesh Gupta', 31, 69),
  ],
  'empty and honorific-only': [
    exactly('', 'Asha Rao', 0),
    exactly('', '', 0),
    exactly('   ', 'Asha Rao', 0),
    exactly('...', 'Asha Rao', 0),
    exactly('Dr.', 'Asha Rao', 0),
    exactly('Mr. Mrs.', 'Mr', 0),
    exactly('Smt', 'Smt', 0),
    exactly('Late Shri', 'Asha Rao', 0),
    exactly('12345', '12345', 0),
    exactly('आशा राव', 'Asha Rao', 0),
  ],
};

const ALL_CASES = Object.values(CASES).flat();

describe('nameMatchScore', () => {
  for (const [behaviour, cases] of Object.entries(CASES)) {
    it(behaviour, () => {
      for (const { a, b, min, max } of cases) {
        const score = nameMatchScore(a, b);
        expect(score, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBeGreaterThanOrEqual(min);
        expect(score, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBeLessThanOrEqual(max);
      }
    });
  }

  it('is symmetric for every table case', () => {
    for (const { a, b } of ALL_CASES)
      expect(nameMatchScore(b, a), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(nameMatchScore(a, b));
  });

  it('is always an integer within 0..100 and symmetric, on table and generated names', () => {
    const names = ALL_CASES.flatMap(({ a, b }) => [a, b]);
    const parts = [
      'Asha',
      'Rao',
      'A.',
      'R',
      'Dr',
      'Smt.',
      'Kumar',
      'Ravikumar',
      'Mohd',
      'Mohammed',
      "D'Souza",
      'José',
      'RK',
      '-',
      ',',
      ' ',
    ];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 300; n++) {
      const length = 1 + (next() % 5);
      names.push(Array.from({ length }, () => parts[next() % parts.length]).join(' '));
    }
    for (let i = 0; i < names.length; i++) {
      for (let j = i; j < names.length; j += 7) {
        const score = nameMatchScore(names[i], names[j]);
        expect(Number.isInteger(score)).toBe(true);
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(100);
        expect(nameMatchScore(names[j], names[i])).toBe(score);
      }
    }
  });

  it('gives 100 for a name against itself, whenever it has a name in it', () => {
    for (const { a } of ALL_CASES) {
      const score = nameMatchScore(a, a);
      expect([0, 100], JSON.stringify(a)).toContain(score);
    }
    expect(nameMatchScore('Ravi Kumar Sharma', 'Ravi Kumar Sharma')).toBe(100);
  });

  it('ranks a full match above initials, and initials above a different first name', () => {
    const full = nameMatchScore('Asha Rao', 'Asha Rao');
    const initial = nameMatchScore('A. Rao', 'Asha Rao');
    const other = nameMatchScore('Usha Rao', 'Asha Rao');
    expect(full).toBeGreaterThan(initial);
    expect(initial).toBeGreaterThanOrEqual(NAME_MATCH_PASS_SCORE);
    expect(other).toBeLessThan(NAME_MATCH_PASS_SCORE);
    expect(nameMatchScore('Srinivasan', 'Sreenivasan')).toBeLessThan(full);
    expect(nameMatchScore('Mohammed Iqbal', 'Mohammad Iqbal')).toBeLessThan(full);
  });

  it('keeps the examples of its documentation', () => {
    expect(nameMatchScore('Rao Asha', 'Asha Rao')).toBe(100);
    expect(nameMatchScore('A. Rao', 'Asha Rao')).toBe(90);
    expect(nameMatchScore('R. K. Sharma', 'Ravi Kumar Sharma')).toBe(87);
    expect(nameMatchScore('Mohammed Iqbal', 'Mohammad Iqbal')).toBe(97);
    expect(nameMatchScore('Sreenivasan', 'Srinivasan')).toBe(95);
    expect(nameMatchScore('Ravi Sharma', 'Ravi Kumar Sharma')).toBe(80);
    expect(nameMatchScore('Asha', 'Asha Rao')).toBe(67);
    expect(nameMatchScore('Asha Rao', 'Asha Verma')).toBe(50);
    expect(nameMatchScore('Asha Rao', 'Vikram Singh')).toBe(0);
  });

  it('scores 0 for inputs longer than MAX_NAME_LENGTH and stays fast on long ones', () => {
    const long = Array.from({ length: 60 }, (_, i) => `Name${String.fromCharCode(97 + (i % 26))}`).join(' ');
    expect(long.length).toBeGreaterThan(MAX_NAME_LENGTH);
    expect(nameMatchScore(long, long)).toBe(0);
    const longest = long.slice(0, MAX_NAME_LENGTH);
    expect(nameMatchScore(longest, longest)).toBe(100);
    expect(nameMatchScore('A B C D E F G H I J K L M N O P Q R S T U V W X Y Z '.repeat(4), 'Asha Rao')).toBeLessThan(10);
  });

  it('exports the default pass score', () => {
    expect(NAME_MATCH_PASS_SCORE).toBe(80);
  });
});
