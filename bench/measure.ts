import { quick } from './mode';

/** Time and peak memory of one run; every figure is printed next to a baseline measured the same way. */
export interface Measurement {
  ms: number;
  /** Peak growth of the process's resident memory over the run (the kernel's high-water mark), in MB. */
  peakMB: number;
}

export interface BenchRow {
  name: string;
  figure: string;
  baseline: string;
  /** figure / baseline (lower is better for times). */
  ratio: number;
  floor?: string;
  ok?: boolean;
  peakMB?: number;
}

export function printTable(rows: BenchRow[]): void {
  const header = ['benchmark', 'figure', 'baseline', 'ratio', 'peak MB', 'floor', 'ok'];
  const lines = rows.map((row) => [
    row.name,
    row.figure,
    row.baseline,
    row.ratio.toFixed(2),
    row.peakMB === undefined ? '' : row.peakMB.toFixed(1),
    row.floor ?? '',
    row.ok === undefined ? (quick && row.floor ? 'quick: not asserted' : '') : row.ok ? 'yes' : 'NO',
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i].length)));
  const format = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ');
  console.log(format(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const line of lines) console.log(format(line));
}
