/**
 * `npm run bench`: every benchmark, each figure next to a baseline measured in the same run, printed as one
 * table and written to bench/results.json so that a later run can be compared. Exits 1 when a floor is missed.
 */
import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { printTable, type BenchRow } from './measure';
import { signingBenchmarks } from './signing.bench';

async function main() {
  const rows: BenchRow[] = [...(await signingBenchmarks())];
  printTable(rows);
  const machine = {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model,
    memoryGB: Math.round(os.totalmem() / 1024 ** 3),
    node: process.version,
  };
  await writeFile(
    path.resolve(__dirname, '../../bench/results.json'),
    `${JSON.stringify({ at: new Date().toISOString(), machine, rows }, null, 2)}\n`,
  );
  console.log(`\nmachine: ${machine.cpus} cores (${machine.model}), ${machine.memoryGB} GB, Node ${machine.node}`);
  if (rows.some((row) => row.ok === false)) {
    console.error('a floor was not reached');
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
