/**
 * One CSV line (RFC 4180, CRLF) of text cells for a spreadsheet: a cell that a spreadsheet would run as a formula
 * (it starts with = + - @, a tab or a carriage return) gets a leading apostrophe, so that a signer's or recipient's
 * text never runs in the owner's spreadsheet; quotes, commas and line breaks are quoted.
 */
export function csvLine(cells: readonly string[]): string {
  return cells.map(csvCell).join(',') + '\r\n';
}

function csvCell(text: string): string {
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
