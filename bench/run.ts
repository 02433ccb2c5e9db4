/**
 * `npm run bench [-- name...]`: every benchmark (or those whose name contains a given word), each figure next
 * to a baseline measured in the same run, printed as one table and written to bench/results.json so that a
 * later run can be compared. Runs the service in production mode on the embedded (or DATABASE_URL) PostgreSQL.
 * Exits 1 when a floor is missed.
 *
 * `npm run bench:quick [-- name...]` (BENCH_QUICK=1, bench/mode.ts): every suite at small sizes, what CI runs. A
 * suite that throws is reported and the others still run; the run exits 1 if any threw (or overran QUICK_SUITE_LIMIT_MS).
 * Floors are not asserted; the rows go to bench/results-quick.json.
 */
import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bulkBenchmarks } from './bulk.bench';
import { completedDocumentBenchmarks } from './completed.bench';
import { contentionBenchmarks } from './contention.bench';
import { costBenchmarks } from './costs.bench';
import { openBenchDatabase, type BenchDatabase } from './harness';
import { printTable, type BenchRow } from './measure';
import { quick } from './mode';
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
  ['documents completed', completedDocumentBenchmarks],
  ['subscriptions', subscriptionBenchmarks],
  ['contention', contentionBenchmarks],
  ['untrusted work', untrustedWorkBenchmarks],
  ['webhooks', webhookBenchmarks],
  ['bulk send', bulkBenchmarks],
  ['costs', costBenchmarks],
];

/** In the quick run, a suite that takes longer than this has hung: the run stops there and fails. */
const QUICK_SUITE_LIMIT_MS = 180_000;

async function main() {
  const only = process.argv.slice(2);
  const database = await openBenchDatabase();
  const rows: BenchRow[] = [];
  const failed: { name: string; error: unknown }[] = [];
  try {
    for (const [name, run] of suites) {
      if (only.length > 0 && !only.some((wanted) => name.includes(wanted))) continue;
      process.stderr.write(`running ${name}${quick ? ' (quick)' : ''}...\n`);
      const began = performance.now();
      if (!quick) rows.push(...(await run(database)));
      else {
        let timer: NodeJS.Timeout | undefined;
        let hung = false;
        const overran = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            hung = true;
            reject(new Error(`still running after ${QUICK_SUITE_LIMIT_MS / 1000} s`));
          }, QUICK_SUITE_LIMIT_MS);
        });
        try {
          rows.push(...(await Promise.race([run(database), overran])));
        } catch (error) {
          failed.push({ name, error });
          process.stderr.write(`${name} FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
          // A suite that hung may still hold the database and the machine: the run ends here.
          if (hung) break;
        } finally {
          clearTimeout(timer);
        }
      }
      process.stderr.write(`${name}: ${((performance.now() - began) / 1000).toFixed(1)} s\n`);
    }
  } finally {
    await database.close();
  }
  // Quick sizes say nothing about a floor: the rows keep its text, the ok column says it was not asserted.
  if (quick) for (const row of rows) delete row.ok;
  printTable(rows);
  const machine = {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model,
    memoryGB: Math.round(os.totalmem() / 1024 ** 3),
    node: process.version,
  };
  await writeFile(
    path.resolve(__dirname, quick ? '../../bench/results-quick.json' : '../../bench/results.json'),
    `${JSON.stringify({ at: new Date().toISOString(), ...(quick ? { mode: 'quick' } : {}), machine, rows }, null, 2)}\n`,
  );
  console.log(`\nmachine: ${machine.cpus} cores (${machine.model}), ${machine.memoryGB} GB, Node ${machine.node}`);
  if (failed.length > 0) {
    console.error(`quick run: ${failed.length} benchmark suite(s) failed (their stacks above):`);
    for (const { name, error } of failed)
      console.error(`- ${name}: ${String(error instanceof Error ? error.message : error).split('\n')[0]}`);
    process.exit(1);
  }
  if (rows.some((row) => row.ok === false)) {
    console.error('a floor was not reached');
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
