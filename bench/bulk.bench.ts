import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { benchServiceEnv, type BenchDatabase } from './harness';
import type { BenchRow } from './measure';
import { sized } from './mode';
import { resetPeak, spawnService, statusMB, waitFor, type ServiceProcess } from './service-process';
import { healthy, upload, userToken } from './uploads.bench';

/** The bulk, and the client loop's sample (its rate is what is compared). */
const BULK_ROWS = Number(process.env.BENCH_BULK_ROWS ?? sized(10_000, 60));
const LOOP_ROWS = Number(process.env.BENCH_BULK_LOOP_ROWS ?? sized(2_000, 20));
/** Rows of each path's warm-up. */
const WARM_UP_ROWS = sized(100, 10);
const LOOP_CONNECTIONS = 8;
const STAMP_ROWS = Number(process.env.BENCH_BULK_STAMP_ROWS ?? sized(1_000, 10));
const FLOOR = 3;
const MEMORY_FLOOR_MB = 200;

/**
 * Issue 33. A two-signer template over a five-page PDF, in the service's own process (`dist-bench/src/main.js`, its
 * workers with it): (a) the client's loop, `initialize-from-template` per row over REST on 8 connections; (b) a
 * 10,000-row JSON bulk from POST to completed: rows/s against (a), floor 3x; storage added per row (database and
 * files); (c) the same as a CSV upload: the service's peak memory growth, floor 200 MB; (d) 1,000 rows each with a
 * stamp (reported).
 */
export async function bulkBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const databaseUrl = await database.create();
  const prepared = await benchServiceEnv(databaseUrl, { ALLOW_SIMULATED_VENDOR: 'true', STAMP_VENDOR_LATENCY_MS: '0' });
  let api: ServiceProcess | undefined;
  const db = new pg.Client({ connectionString: databaseUrl });
  try {
    api = spawnService('main.js', prepared.env);
    const url = `http://127.0.0.1:${prepared.port}`;
    await waitFor(api, 'the API process answering /healthz', () => healthy(url), 60_000);
    await db.connect();
    const token = await userToken(databaseUrl);
    const call = callerOf(url, token);
    const templateId = await twoSignerTemplate(call, await upload(url, token, await fivePagePdf()));

    // Warm-up: both paths' code loaded and compiled.
    await clientLoop(call, templateId, WARM_UP_ROWS);
    await runBulk(call, db, { template_id: templateId, sign_type: 'suresign', rows: rowsOf(WARM_UP_ROWS) });

    const loop = await clientLoop(call, templateId, LOOP_ROWS);
    const before = await storageBytes(db, prepared.dataDir);
    const bulk = await runBulk(call, db, { template_id: templateId, sign_type: 'suresign', rows: rowsOf(BULK_ROWS) });
    const perRowKB = ((await storageBytes(db, prepared.dataDir)) - before) / BULK_ROWS / 1024;

    const resetWorked = resetPeak(api.pid);
    const rssBefore = statusMB(api.pid, resetWorked ? 'VmRSS' : 'VmHWM');
    const csv = await runCsvBulk(url, token, db, templateId, BULK_ROWS);
    const growthMB = statusMB(api.pid, 'VmHWM') - rssBefore;

    const stamped = await stampBulk(call, db, templateId);
    const loopRate = LOOP_ROWS / loop;
    const bulkRate = BULK_ROWS / bulk;
    return [
      {
        name: `bulk send, ${BULK_ROWS} JSON rows (2 signers, 5-page PDF)`,
        figure: `${bulkRate.toFixed(0)} rows/s (${bulk.toFixed(1)} s); ${perRowKB.toFixed(1)} kB stored per row`,
        baseline: `initialize-from-template per row, REST, ${LOOP_CONNECTIONS} connections: ${loopRate.toFixed(0)} rows/s`,
        ratio: bulkRate / loopRate,
        floor: `>= ${FLOOR}x`,
        ok: bulkRate / loopRate >= FLOOR,
      },
      {
        name: `bulk send, ${BULK_ROWS} CSV rows: service peak memory growth`,
        figure: `${growthMB.toFixed(0)} MB (${(BULK_ROWS / csv).toFixed(0)} rows/s)`,
        baseline: `${MEMORY_FLOOR_MB} MB`,
        ratio: growthMB / MEMORY_FLOOR_MB,
        floor: `< ${MEMORY_FLOOR_MB} MB`,
        ok: growthMB < MEMORY_FLOOR_MB,
        peakMB: growthMB,
      },
      {
        name: `bulk send, ${STAMP_ROWS} rows each with a stamp`,
        figure: `${(STAMP_ROWS / stamped).toFixed(0)} rows/s`,
        baseline: `rows without stamps: ${bulkRate.toFixed(0)} rows/s`,
        ratio: STAMP_ROWS / stamped / bulkRate,
      },
    ];
  } finally {
    await db.end().catch(() => undefined);
    await api?.stop();
    await prepared.remove();
  }
}

export type Call = (method: string, route: string, body?: unknown) => Promise<any>;

export function callerOf(url: string, token: string): Call {
  return async (method, route, body) => {
    const response = await fetch(`${url}/api/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const answer = (await response.json()) as { data?: unknown };
    if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${JSON.stringify(answer).slice(0, 500)}`);
    return answer.data;
  };
}

export async function fivePagePdf(): Promise<Uint8Array<ArrayBuffer>> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let page = 1; page <= 5; page++) {
    const sheet = pdf.addPage([595, 842]);
    for (let line = 0; line < 40; line++)
      sheet.drawText(`Loan agreement, page ${page}, clause ${line + 1}: the borrower repays in equal instalments.`, {
        x: 50,
        y: 800 - line * 18,
        size: 10,
        font,
      });
  }
  return new Uint8Array(await pdf.save()) as Uint8Array<ArrayBuffer>;
}

export async function twoSignerTemplate(call: Call, fileId: string): Promise<string> {
  const box = (page: number) => ({ type: 'signature', page, x: 72, y: 700, width: 160, height: 50, alignment: 'left' });
  const saved = await call('POST', '/templates/save', {
    name: 'Bench loan agreement',
    file_id: fileId,
    signers: [
      { reason: 'Borrower', elements: [box(4)] },
      { reason: 'Lender', elements: [box(4)] },
    ],
  });
  return saved.client_id;
}

const contacts = (index: number) => [
  { full_name: `Borrower ${index}`, email: `borrower${index}@example.com` },
  { full_name: 'Lender Bank', email: 'loans@example.com' },
];
export const rowsOf = (count: number) =>
  Array.from({ length: count }, (_, index) => ({ key: `row-${index}`, signers: contacts(index) }));

/** `rows` initialize-from-template calls over LOOP_CONNECTIONS connections at once; seconds. */
async function clientLoop(call: Call, templateId: string, rows: number): Promise<number> {
  let next = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: LOOP_CONNECTIONS }, async () => {
      while (next < rows) {
        const index = next++;
        await call('POST', '/esign/initialize-from-template', {
          template_id: templateId,
          sign_type: 'suresign',
          signers: contacts(index),
        });
      }
    }),
  );
  return (performance.now() - began) / 1000;
}

/** Seconds from the bulk's POST to its completion, every row made. */
export async function runBulk(call: Call, db: pg.Client, body: Record<string, unknown>): Promise<number> {
  const began = performance.now();
  const bulk = await call('POST', '/esign/bulk-send', body);
  await completed(db, bulk.client_id, (body.rows as unknown[]).length);
  return (performance.now() - began) / 1000;
}

async function runCsvBulk(url: string, token: string, db: pg.Client, templateId: string, rows: number): Promise<number> {
  const lines = ['key,signer_1_full_name,signer_1_email,signer_2_full_name,signer_2_email'];
  for (let index = 0; index < rows; index++)
    lines.push(`csv-${index},Borrower ${index},borrower${index}@example.com,Lender Bank,loans@example.com`);
  const form = new FormData();
  form.append('template_id', templateId);
  form.append('options', JSON.stringify({ sign_type: 'suresign' }));
  form.append('file', new Blob([lines.join('\r\n')], { type: 'text/csv' }), 'rows.csv');
  const began = performance.now();
  const response = await fetch(`${url}/api/v1/esign/bulk-send`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const answer = (await response.json()) as { data?: { client_id: string } };
  if (!response.ok || !answer.data) throw new Error(`CSV bulk answered ${response.status}: ${JSON.stringify(answer)}`);
  await completed(db, answer.data.client_id, rows);
  return (performance.now() - began) / 1000;
}

/** STAMP_ROWS mock stamps procured, then as many rows each asking for one; seconds of the bulk. */
async function stampBulk(call: Call, db: pg.Client, templateId: string): Promise<number> {
  const order = await call('POST', '/stamps/create-order', {
    state_code: 'MH',
    article_id: 'MH-5',
    first_party_name: 'Borrower',
    second_party_name: 'Lender Bank',
    stamp_duty_amount: 100,
    consideration_amount: 100000,
    quantity: STAMP_ROWS,
    mock: true,
  });
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { rows } = await db.query(
      `select count(*)::int as n from stamp_instances where order_id = $1 and status = 'available'`,
      [order.client_id],
    );
    if (rows[0].n === STAMP_ROWS) break;
    if (Date.now() > deadline) throw new Error('the stamps of the bench order were not procured in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const stamp = { amount: '100', state_code: 'MH', article_id: 'MH-5', mock: true };
  return runBulk(call, db, {
    template_id: templateId,
    sign_type: 'suresign',
    rows: rowsOf(STAMP_ROWS).map((row) => ({ ...row, key: `stamped-${row.key}`, stamp })),
  });
}

/** Waits for the bulk to complete with every row made (a failed row fails the benchmark). */
async function completed(db: pg.Client, bulkId: string, rows: number): Promise<void> {
  const deadline = Date.now() + 1_800_000;
  for (;;) {
    const { rows: found } = await db.query(
      `select b.status, (select count(*)::int from bulk_rows where bulk_id = b.id and status = 'created') as created,
              (select error from bulk_rows where bulk_id = b.id and status = 'failed' limit 1) as error
         from bulks b where b.id = $1`,
      [bulkId],
    );
    const state = found[0];
    if (state?.error) throw new Error(`a bench row failed: ${JSON.stringify(state.error)}`);
    if (state?.status === 'completed') {
      if (state.created !== rows) throw new Error(`the bulk made ${state.created} of ${rows} rows`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`bulk ${bulkId} did not complete`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The database's size and the data directory's files, in bytes. */
async function storageBytes(db: pg.Client, dataDir: string): Promise<number> {
  const { rows } = await db.query('select pg_database_size(current_database())::bigint as bytes');
  return Number(rows[0].bytes) + (await directoryBytes(dataDir));
}

async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? await directoryBytes(full) : (await stat(full)).size;
  }
  return total;
}
