/**
 * The contract's `format` for `date` and `date_signed` elements: a documented set of patterns (docs/api.md, Element
 * kinds). Values travel as ISO dates (`YYYY-MM-DD`, what a browser's date input gives); the format is how they are
 * drawn. Written by hand: six patterns and the Gregorian calendar are less than any date library's import.
 */
export const DATE_FORMATS = [
  'DD/MM/YYYY',
  'DD-MM-YYYY',
  'DD.MM.YYYY',
  'MM/DD/YYYY',
  'YYYY-MM-DD',
  'DD MMM YYYY',
  'D MMMM YYYY',
  'MMMM D, YYYY',
] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];
export const DEFAULT_DATE_FORMAT: DateFormat = 'DD/MM/YYYY';

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** A real calendar date written `YYYY-MM-DD` (years 1000 to 9999), else null. */
export function parseIsoDate(value: string): { year: number; month: number; day: number } | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return null;
  const [year, month, day] = match.slice(1).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  if (year < 1000 || date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return { year, month, day };
}

/** An ISO date drawn in `format`. */
export function formatDate(iso: string, format: string | null): string {
  const parsed = parseIsoDate(iso);
  if (!parsed) return iso;
  const { year, month, day } = parsed;
  const dd = String(day).padStart(2, '0');
  const mm = String(month).padStart(2, '0');
  const name = MONTHS[month - 1];
  switch ((format ?? DEFAULT_DATE_FORMAT) as DateFormat) {
    case 'DD-MM-YYYY':
      return `${dd}-${mm}-${year}`;
    case 'DD.MM.YYYY':
      return `${dd}.${mm}.${year}`;
    case 'MM/DD/YYYY':
      return `${mm}/${dd}/${year}`;
    case 'YYYY-MM-DD':
      return iso;
    case 'DD MMM YYYY':
      return `${dd} ${name.slice(0, 3)} ${year}`;
    case 'D MMMM YYYY':
      return `${day} ${name} ${year}`;
    case 'MMMM D, YYYY':
      return `${name} ${day}, ${year}`;
    default:
      return `${dd}/${mm}/${year}`;
  }
}

/** India Standard Time is UTC+05:30 all year (no daylight saving). */
const IST_OFFSET_MS = 5.5 * 3600 * 1000;

/** A moment as India sees it: the ISO date and the 24-hour time, in IST. */
export function inIst(moment: Date): { date: string; time: string } {
  const shifted = new Date(moment.getTime() + IST_OFFSET_MS).toISOString();
  return { date: shifted.slice(0, 10), time: shifted.slice(11, 16) };
}
