/**
 * `npm run bench [-- name...]`: every benchmark (or those whose name contains a given word), each figure next
 * to a baseline measured in the same run, printed as one table and written to bench/results.json so that a
 * later run can be compared. Runs the service in production mode on the embedded (or DATABASE_URL) PostgreSQL.
 * Exits 1 when a floor is missed.
 */
import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bulkBenchmarks } from './bulk.bench';
import { contentionBenchmarks } from './contention.bench';
import { openBenchDatabase, type BenchDatabase } from './harness';
import { printTable, type BenchRow } from './measure';
import { nestedGraphqlBenchmarks } from './nested-graphql.bench';
import { procurementBenchmarks } from './procurement.bench';
import { readBenchmarks } from './reads.bench';
import { longTermBenchmarks } from './long-term.bench';
import { signingBenchmarks } from './signing.bench';
import { subscriptionBenchmarks } from './subscriptions.bench';
import { untrustedWorkBenchmarks } from './untrusted-work.bench';
import { uploadBenchmarks } from './uploads.bench';
import { webhookBenchmarks } from './webhooks.bench';

/** In the order; each starts (and stops) its own app on a database of its own. */
const suites: [string, (database: BenchDatabase) => Promise<BenchRow[]>][] = [
  ['reads', readBenchmarks],
  ['nested GraphQL', nestedGraphqlBenchmarks],
  ['procurement and queue', procurementBenchmarks],
  ['uploads', uploadBenchmarks],
  ['signing', () => signingBenchmarks()],
  ['long-term signatures', () => longTermBenchmarks()],
  ['subscriptions', subscriptionBenchmarks],
  ['contention', contentionBenchmarks],
  ['untrusted work', untrustedWorkBenchmarks],
  ['webhooks', webhookBenchmarks],
  ['bulk send', bulkBenchmarks],
];

async function main() {
  const only = process.argv.slice(2);
  const database = await openBenchDatabase();
  const rows: BenchRow[] = [];
  try {
    for (const [name, run] of suites) {
      if (only.length > 0 && !only.some((wanted) => name.includes(wanted))) continue;
      process.stderr.write(`running ${name}...\n`);
      rows.push(...(await run(database)));
    }
  } finally {
    await database.close();
  }
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
