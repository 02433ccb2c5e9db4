/** Money is integer paise inside the service; rupees appear only at the edges, as decimal strings. */

const RUPEES = /^(\d{1,13})(?:\.(\d{1,2}))?$/;

/** Parses "1250", "1250.5" or "1250.50" into paise; anything else (signs, exponents, 3 decimals) is null. */
export function parseRupees(input: string | number): bigint | null {
  const text = typeof input === 'number' ? (Number.isFinite(input) ? String(input) : '') : input.trim();
  const match = RUPEES.exec(text);
  if (!match) return null;
  return BigInt(match[1]) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
}

/** 125050n -> "1250.50" */
export function formatRupees(paise: bigint): string {
  const negative = paise < 0n;
  const abs = negative ? -paise : paise;
  return `${negative ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}
