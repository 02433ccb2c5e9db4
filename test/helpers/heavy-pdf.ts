/**
 * A valid one-page PDF padded with `objects` small objects that nothing references, and no cross-reference
 * table, so a parser must scan every one: pdf-lib takes about 0.85 s for 20,000 (1.6 MB) and 3 s for 100,000
 * (8.4 MB) on the development machine. Tests and the benchmark use it as work on uploaded bytes that takes long.
 */
export function heavyPdf(objects: number): Uint8Array<ArrayBuffer> {
  const parts = ['%PDF-1.7\n'];
  parts.push('1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n');
  parts.push('2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n');
  parts.push('3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n');
  for (let n = 4; n < objects + 4; n++)
    parts.push(`${n} 0 obj\n<< /K [${n} ${n} ${n} ${n} ${n} ${n} ${n} ${n}] /S (x) >>\nendobj\n`);
  parts.push(`trailer\n<< /Root 1 0 R /Size ${objects + 4} >>\n%%EOF\n`);
  return new TextEncoder().encode(parts.join(''));
}
