/**
 * Name match: how well the name on an Aadhaar eSign certificate agrees with the name the integrator gave
 * (`prefill_name` / `full_name`), as an integer 0-100. Symmetric: nameMatchScore(a, b) === nameMatchScore(b, a).
 *
 * 1. Normalize: NFKD, drop combining marks ("José" -> "jose"), lowercase, fold a few letters NFKD leaves alone
 *    (ø, æ, ß, ...), drop apostrophes ("D'Souza" -> "dsouza"), turn every other non a-z character into a
 *    word break ("R.K.Sharma" -> "r k sharma"). Only Latin script is understood; other scripts vanish.
 * 2. Tokenize: drop the leading run of honorifics (Mr, Mrs, Ms, Miss, Dr, Shri, Sri, Smt, Kumari, Km, Prof,
 *    Late, ...; only at the start, since e.g. "Kumari" is also a surname); expand "Md"/"Mohd" to "mohammad"
 *    (marked as an abbreviation); split a 2-3 letter token without vowels into initials ("RK" -> "r", "k").
 *    No tokens left (empty or honorific-only input) scores 0. Inputs over MAX_NAME_LENGTH characters score 0.
 * 3. Pair credit, 0-1000 per token pair (order-free, symmetric):
 *    - identical                                      1000
 *    - the same after transliteration folding         950  (ee->i, oo->u, ou->au, ksh->x, ph->f, w->v, q->k,
 *      (fold() below)                                       ck->k, h after a consonant dropped, final y->i,
 *                                                           doubled letters collapsed: Sreenivasan/Srinivasan)
 *    - an initial and a word with that first letter   800  ("a" / "asha"); two different initials 0
 *    - otherwise an edit-distance similarity 1 - cost / longer length (raw or folded, whichever is higher),
 *      where insertions, deletions and substitutions cost 1 except a vowel for a vowel, which costs 0.5 when
 *      both words have 6+ letters (Mohammed/Muhammad, Gaurav/Gourav; short names that differ by a vowel are
 *      usually different names: Mina/Mona). Words starting with different letters (after folding) get 0,
 *      a similarity under 0.85 gets 0 (Ramesh/Rakesh 0.83), and the credit is at most 950.
 *    - an expanded abbreviation against a non-abbreviation is capped at 900.
 * 4. Assignment: the one-to-one pairing of the two token lists with the largest total credit (Hungarian
 *    algorithm); a token left unpaired earns nothing. Adjacent tokens of one side are also tried joined when
 *    the join is a token of the other side ("Ravi Kumar" / "Ravikumar", "D Souza" / "DSouza"); the better
 *    reading counts.
 * 5. Score = round(100 * 2 * total credit / (1000 * (tokens in a + tokens in b))), a Dice coefficient: every
 *    token of either name that is not matched costs the same, so a missing middle name of three costs 20
 *    ("Ravi Sharma" / "Ravi Kumar Sharma" = 80) and a missing surname of two costs 33 ("Asha" / "Asha Rao").
 *
 * Examples: "Rao Asha"/"Asha Rao" 100, "A. Rao"/"Asha Rao" 90, "R. K. Sharma"/"Ravi Kumar Sharma" 87,
 * "Mohammed Iqbal"/"Mohammad Iqbal" 97, "Sreenivasan"/"Srinivasan" 95, "Asha Rao"/"Asha Verma" 50,
 * "Asha Rao"/"Vikram Singh" 0.
 */

/** The default score at or above which a name is taken to match. */
export const NAME_MATCH_PASS_SCORE = 80;

/** Longer inputs are not names; they score 0 (and this bounds the work done). */
export const MAX_NAME_LENGTH = 256;

const FULL = 1000;
const VARIANT = 950;
const ABBREVIATION = 900;
const INITIAL = 800;
const MIN_SIMILARITY = 0.85;
/** Both words at least this long before a vowel-for-vowel substitution costs half. */
const LONG_WORD = 6;

const HONORIFICS = new Set([
  'mr',
  'mrs',
  'ms',
  'mx',
  'miss',
  'master',
  'dr',
  'prof',
  'shri',
  'shree',
  'sri',
  'smt',
  'shrimati',
  'srimati',
  'sushri',
  'kumari',
  'kum',
  'km',
  'late',
]);

/** Abbreviations written in place of a name; the expansion matches at most ABBREVIATION against a full word. */
const ABBREVIATIONS: Readonly<Record<string, string>> = { md: 'mohammad', mohd: 'mohammad' };

/** Latin letters that NFKD does not decompose. */
const LETTER_FOLDS: Readonly<Record<string, string>> = {
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  ß: 'ss',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
};

interface Token {
  text: string;
  abbreviation: boolean;
}

function words(input: string): string[] {
  const plain = input
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[æœøßłđðþı]/g, (ch) => LETTER_FOLDS[ch])
    .replace(/['’‘`´ʼ]/g, '')
    .replace(/[^a-z]+/g, ' ')
    .trim();
  return plain ? plain.split(' ') : [];
}

function tokenize(input: string): Token[] {
  const all = words(input);
  let start = 0;
  while (start < all.length && HONORIFICS.has(all[start])) start++;
  const tokens: Token[] = [];
  for (const word of all.slice(start)) {
    if (ABBREVIATIONS[word]) tokens.push({ text: ABBREVIATIONS[word], abbreviation: true });
    else if (/^[b-df-hj-np-tv-xz]{2,3}$/.test(word))
      for (const letter of word) tokens.push({ text: letter, abbreviation: false });
    else tokens.push({ text: word, abbreviation: false });
  }
  return tokens;
}

/** Spelling variants common in romanized Indian names, folded to one form. */
function fold(word: string): string {
  return word
    .replace(/ee/g, 'i')
    .replace(/oo/g, 'u')
    .replace(/ou/g, 'au')
    .replace(/ksh/g, 'x')
    .replace(/ph/g, 'f')
    .replace(/w/g, 'v')
    .replace(/q/g, 'k')
    .replace(/ck/g, 'k')
    .replace(/([b-df-gj-np-tv-z])h/g, '$1')
    .replace(/y$/, 'i')
    .replace(/(.)\1+/g, '$1');
}

const VOWEL = /[aeiou]/;

/** 1 - weighted edit distance / longer length (see the header for the weights). */
function similarity(a: string, b: string): number {
  const halfVowels = Math.min(a.length, b.length) >= LONG_WORD;
  // Costs in halves so that everything stays an integer.
  let previous = Array.from({ length: b.length + 1 }, (_, j) => 2 * j);
  for (let i = 1; i <= a.length; i++) {
    const current = [2 * i];
    for (let j = 1; j <= b.length; j++) {
      const x = a[i - 1];
      const y = b[j - 1];
      const substitution = x === y ? 0 : halfVowels && VOWEL.test(x) && VOWEL.test(y) ? 1 : 2;
      current[j] = Math.min(previous[j] + 2, current[j - 1] + 2, previous[j - 1] + substitution);
    }
    previous = current;
  }
  return 1 - previous[b.length] / (2 * Math.max(a.length, b.length));
}

function textCredit(a: string, b: string): number {
  if (a === b) return FULL;
  if (a.length === 1 || b.length === 1) return a[0] === b[0] ? INITIAL : 0;
  const fa = fold(a);
  const fb = fold(b);
  if (fa === fb) return VARIANT;
  if (fa[0] !== fb[0]) return 0;
  const best = Math.max(similarity(a, b), similarity(fa, fb));
  return best >= MIN_SIMILARITY ? Math.min(VARIANT, Math.round(best * FULL)) : 0;
}

function pairCredit(a: Token, b: Token): number {
  const credit = textCredit(a.text, b.text);
  return a.abbreviation !== b.abbreviation ? Math.min(credit, ABBREVIATION) : credit;
}

/** Joins runs of adjacent tokens whose concatenation (folded) is a word of `other`, longest run first. */
function joinRuns(tokens: Token[], other: Token[]): Token[] {
  const targets = new Set(other.filter((t) => t.text.length > 1).map((t) => fold(t.text)));
  const joined: Token[] = [];
  let i = 0;
  while (i < tokens.length) {
    let taken = 1;
    for (let end = tokens.length; end > i + 1; end--) {
      const run = tokens.slice(i, end);
      if (targets.has(fold(run.map((t) => t.text).join('')))) {
        joined.push({ text: run.map((t) => t.text).join(''), abbreviation: run.some((t) => t.abbreviation) });
        taken = end - i;
        break;
      }
    }
    if (taken === 1) joined.push(tokens[i]);
    i += taken;
  }
  return joined;
}

/** Largest total of credit[row][column] over one-to-one pairings (Hungarian algorithm, rows <= columns). */
function maxAssignment(credit: number[][]): number {
  const n = credit.length;
  const m = credit[0].length;
  const cost = (i: number, j: number) => FULL - credit[i - 1][j - 1];
  const u = new Array<number>(n + 1).fill(0);
  const v = new Array<number>(m + 1).fill(0);
  const rowOf = new Array<number>(m + 1).fill(0);
  const way = new Array<number>(m + 1).fill(0);
  for (let i = 1; i <= n; i++) {
    rowOf[0] = i;
    let j0 = 0;
    const minv = new Array<number>(m + 1).fill(Infinity);
    const used = new Array<boolean>(m + 1).fill(false);
    do {
      used[j0] = true;
      const i0 = rowOf[j0];
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= m; j++) {
        if (used[j]) continue;
        const reduced = cost(i0, j) - u[i0] - v[j];
        if (reduced < minv[j]) {
          minv[j] = reduced;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (let j = 0; j <= m; j++) {
        if (used[j]) {
          u[rowOf[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (rowOf[j0] !== 0);
    do {
      const j1 = way[j0];
      rowOf[j0] = rowOf[j1];
      j0 = j1;
    } while (j0 !== 0);
  }
  let total = 0;
  for (let j = 1; j <= m; j++) if (rowOf[j] !== 0) total += credit[rowOf[j] - 1][j - 1];
  return total;
}

function score(a: Token[], b: Token[]): number {
  const [rows, columns] = a.length <= b.length ? [a, b] : [b, a];
  const total = maxAssignment(rows.map((x) => columns.map((y) => pairCredit(x, y))));
  return Math.round((200 * total) / (FULL * (a.length + b.length)));
}

/** How well two names agree, an integer 0-100 (see the header of this file). */
export function nameMatchScore(certificateName: string, expectedName: string): number {
  if (typeof certificateName !== 'string' || typeof expectedName !== 'string') return 0;
  if (certificateName.length > MAX_NAME_LENGTH || expectedName.length > MAX_NAME_LENGTH) return 0;
  const a = tokenize(certificateName);
  const b = tokenize(expectedName);
  if (a.length === 0 || b.length === 0) return 0;
  const best = Math.max(score(a, b), score(joinRuns(a, b), joinRuns(b, a)));
  return Math.min(100, Math.max(0, best));
}
