import pg from 'pg';
import { heavyPdf } from '../test/helpers/heavy-pdf';
import { callerOf, fivePagePdf, rowsOf, runBulk, twoSignerTemplate, type Call } from './bulk.bench';
import { benchServiceEnv, percentile, type BenchDatabase } from './harness';
import { probeHealth, type HealthProbe } from './health-probe';
import { timestampedDocument } from './long-term.bench';
import type { BenchRow } from './measure';
import { sized } from './mode';
import { spawnService, waitFor, type ServiceProcess } from './service-process';
import { healthy, upload, userToken } from './uploads.bench';

/** How long /healthz is sampled, idle and under the uploads and the verifications. */
const IDLE_MS = sized(3_000, 500);
const LOADED_MS = sized(12_000, 1_500);
/** Uploads in flight at once, each a PDF whose parsing takes pdf-lib about 3 s here. */
const CONCURRENT_UPLOADS = 3;
const HEAVY_OBJECTS = sized(100_000, 5_000);
/** The document verified while /healthz is probed: just under the 50 MB upload limit, ten signed revisions. */
const VERIFIED_MB = sized(48, 2);
const VERIFIED_SIGNATURES = 10;
/** The bulk send made while /healthz is probed (two signers, a five-page PDF), after a small one as warm-up. */
const BULK_ROWS = sized(2_000, 20);
const WARM_UP_ROWS = sized(50, 5);
/** The mock stamp order procured while /healthz is probed, after a small one as warm-up. */
const STAMPS = sized(5_000, 60);
const WARM_UP_STAMPS = sized(200, 10);
const FLOOR_MS = 100;

/**
 * /healthz while each kind of heavy work runs in the API process (a process of its own, running its queue workers as
 * a single-process deployment does): verify reports (issue 18) and uploads (issue 16), whose work on attacker-supplied
 * bytes runs in the worker pool, and a bulk send and a stamp order, worked by the queue in the same process (issue
 * 37). /healthz is asked every 20 ms over one keep-alive connection by a process of its own (this one is busy making
 * the work). Figure: /healthz p99 under each load; baseline: the same probe with the service idle. Floor: p99 under
 * 100 ms for each.
 */
export async function untrustedWorkBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const databaseUrl = await database.create();
  const prepared = await benchServiceEnv(databaseUrl, { RUN_WORKERS: 'true' });
  let api: ServiceProcess | undefined;
  const db = new pg.Client({ connectionString: databaseUrl });
  try {
    api = spawnService('main.js', prepared.env);
    const url = `http://127.0.0.1:${prepared.port}`;
    await waitFor(api, 'the API process answering /healthz', () => healthy(url), 60_000);
    await db.connect();
    const token = await userToken(databaseUrl);
    await upload(url, token, heavyPdf(1_000)); // warm-up: the upload path and a pool thread

    const idle = await during(url, () => new Promise((resolve) => setTimeout(resolve, IDLE_MS)));
    const row = (name: string, loaded: number[], detail: string): BenchRow => {
      const p99 = percentile(loaded, 99);
      return {
        name: `/healthz while ${name}`,
        figure: `p50 ${percentile(loaded, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...loaded).toFixed(1)} ms (${loaded.length} probes; ${detail})`,
        baseline: `idle: p50 ${percentile(idle, 50).toFixed(1)} ms, p99 ${percentile(idle, 99).toFixed(1)} ms`,
        ratio: p99 / percentile(idle, 99),
        floor: `p99 < ${FLOOR_MS} ms`,
        ok: p99 < FLOOR_MS,
      };
    };
    const call = callerOf(url, token);
    return [
      await whileVerifying(url, token, row),
      await whileUploading(url, token, row),
      await whileBulkSending(url, token, call, db, row),
      await whileProcuring(api, url, call, db, row),
    ];
  } finally {
    await db.end().catch(() => undefined);
    await api?.stop();
    await prepared.remove();
  }
}

type Row = (name: string, loaded: number[], detail: string) => BenchRow;

/** The /healthz latencies while `work` runs. */
async function during(url: string, work: () => Promise<unknown>): Promise<number[]> {
  const probe: HealthProbe = probeHealth(url, { ownProcess: true });
  let failure: { error: unknown } | undefined;
  try {
    await work();
  } catch (error) {
    failure = { error };
  }
  const latencies = await probe.stop();
  if (failure) throw failure.error;
  return latencies;
}

/** `step` over and over for LOADED_MS, `lanes` at a time; how many were done. */
async function repeatedly(lanes: number, step: () => Promise<unknown>): Promise<number> {
  const end = performance.now() + LOADED_MS;
  let done = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (performance.now() < end) {
        await step();
        done++;
      }
    }),
  );
  return done;
}

/** Issue 16: CONCURRENT_UPLOADS heavy PDFs in flight through upload-pdf, each parsed in the worker pool. */
async function whileUploading(url: string, token: string, row: Row): Promise<BenchRow> {
  const pdf = heavyPdf(HEAVY_OBJECTS);
  let uploads = 0;
  const loaded = await during(url, async () => (uploads = await repeatedly(CONCURRENT_UPLOADS, () => upload(url, token, pdf))));
  return row(
    `${CONCURRENT_UPLOADS} uploads of a ${(pdf.length / 2 ** 20).toFixed(1)} MB PDF parse in the worker pool`,
    loaded,
    `${uploads} uploads`,
  );
}

/**
 * Issue 18: the verify report of a 48 MB PDF of ten time-stamped signatures (ten revisions, each judged), computed
 * in the worker pool, GET esign/verify back to back; with how long each report took.
 */
async function whileVerifying(url: string, token: string, row: Row): Promise<BenchRow> {
  const pdf = await timestampedDocument(VERIFIED_MB, VERIFIED_SIGNATURES);
  const fileId = await upload(url, token, pdf as Uint8Array<ArrayBuffer>);
  const initialized = await fetch(`${url}/api/v1/esign/initialize-esign`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      sign_type: 'suresign',
      file_id: fileId,
      signers: [{ full_name: 'Bench Signer', elements: [{ x: 72, y: 72, page: 0, type: 'signature', alignment: 'left' }] }],
    }),
  });
  const session = (await initialized.json()) as { data?: { client_id?: string } };
  if (!initialized.ok || !session.data?.client_id)
    throw new Error(`initialize-esign answered ${initialized.status}: ${JSON.stringify(session)}`);
  const reports: { ms: number; revisions: number }[] = [];
  const verify = async () => {
    const began = performance.now();
    const response = await fetch(`${url}/api/v1/esign/verify?client_id=${session.data!.client_id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await response.json()) as { data?: { signatures: unknown[]; revisions: unknown[] } };
    if (!response.ok || body.data?.signatures.length !== VERIFIED_SIGNATURES)
      throw new Error(`esign/verify answered ${response.status}: ${JSON.stringify(body).slice(0, 500)}`);
    reports.push({ ms: performance.now() - began, revisions: body.data.revisions.length });
  };
  await verify(); // warm-up: the verify path loaded and compiled in a pool thread
  reports.length = 0;
  const loaded = await during(url, () => repeatedly(1, verify));
  const mean = reports.reduce((sum, report) => sum + report.ms, 0) / reports.length;
  return row(
    `esign/verify reports on a ${(pdf.length / 2 ** 20).toFixed(1)} MB PDF of ${VERIFIED_SIGNATURES} time-stamped signatures, back to back`,
    loaded,
    `${reports.length} reports of ${reports[0]?.revisions} revisions, ${mean.toFixed(0)} ms each over HTTP`,
  );
}

/** Issue 33's bulk send (bench/bulk.bench.ts's template and rows), from its POST until every row is made. */
async function whileBulkSending(url: string, token: string, call: Call, db: pg.Client, row: Row): Promise<BenchRow> {
  const templateId = await twoSignerTemplate(call, await upload(url, token, await fivePagePdf()));
  const bulk = (rows: number) => runBulk(call, db, { template_id: templateId, sign_type: 'suresign', rows: rowsOf(rows) });
  await bulk(WARM_UP_ROWS);
  let seconds = 0;
  const loaded = await during(url, async () => (seconds = await bulk(BULK_ROWS)));
  return row(
    `a bulk send of ${BULK_ROWS} rows (2 signers, 5-page PDF) is made by the queue in the same process`,
    loaded,
    `${(BULK_ROWS / seconds).toFixed(0)} rows/s`,
  );
}

/** A mock stamp order (procurement's vendor, render and storage) worked by the queue in the API process. */
async function whileProcuring(api: ServiceProcess, url: string, call: Call, db: pg.Client, row: Row): Promise<BenchRow> {
  const procure = async (quantity: number) => {
    const order = (await call('POST', '/stamps/create-order', {
      state_code: 'MH',
      article_id: 'MH-5',
      first_party_name: 'Asha Rao',
      second_party_name: 'Vikram Singh',
      stamp_duty_amount: 100,
      consideration_amount: 250000,
      quantity,
      mock: true,
    })) as { client_id: string };
    await waitFor(
      api,
      `${quantity} stamps of order ${order.client_id} available`,
      async () => {
        const { rows } = await db.query<{ n: number }>(
          `select count(*)::int as n from stamp_instances where order_id = $1 and status = 'available'`,
          [order.client_id],
        );
        return rows[0]!.n === quantity;
      },
      300_000,
    );
  };
  await procure(WARM_UP_STAMPS);
  let seconds = 0;
  const loaded = await during(url, async () => {
    const began = performance.now();
    await procure(STAMPS);
    seconds = (performance.now() - began) / 1000;
  });
  return row(
    `a ${STAMPS}-stamp mock order is procured by the queue in the same process`,
    loaded,
    `${(STAMPS / seconds).toFixed(0)} stamps/s`,
  );
}
