import http from 'node:http';
import { heavyPdf } from '../test/helpers/heavy-pdf';
import { benchServiceEnv, percentile, type BenchDatabase } from './harness';
import type { BenchRow } from './measure';
import { sized } from './mode';
import { spawnService, waitFor, type ServiceProcess } from './service-process';
import { healthy, upload, userToken } from './uploads.bench';
import { timestampedDocument } from './long-term.bench';

/** How long /healthz is sampled, idle and under load, and how often. */
const IDLE_MS = sized(3_000, 500);
const LOADED_MS = sized(12_000, 1_500);
const PROBE_EVERY_MS = 20;
/** Uploads in flight at once, each a PDF whose parsing takes pdf-lib about 3 s here. */
const CONCURRENT_UPLOADS = 3;
const HEAVY_OBJECTS = sized(100_000, 5_000);
/** The document verified while /healthz is probed: just under the 50 MB upload limit, ten signed revisions. */
const VERIFIED_MB = sized(48, 2);
const VERIFIED_SIGNATURES = 10;

/**
 * Issue 16: work on attacker-supplied bytes runs in the worker pool, so the event loop keeps answering. The API
 * runs in a process of its own; this process keeps CONCURRENT_UPLOADS heavy PDFs in flight through upload-pdf
 * (each parsed in the pool) while it asks /healthz every 20 ms over one keep-alive connection. Figure: /healthz
 * p99 under that load; baseline: the same probe with the service idle. Floor: p99 under 100 ms.
 */
export async function untrustedWorkBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const databaseUrl = await database.create();
  const prepared = await benchServiceEnv(databaseUrl);
  const pdf = heavyPdf(HEAVY_OBJECTS);
  let api: ServiceProcess | undefined;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    api = spawnService('main.js', prepared.env);
    const url = `http://127.0.0.1:${prepared.port}`;
    await waitFor(api, 'the API process answering /healthz', () => healthy(url), 60_000);
    const token = await userToken(databaseUrl);
    await upload(url, token, heavyPdf(1_000)); // warm-up: the upload path and a pool thread

    const idle = await probe(url, agent, IDLE_MS);
    let stop = false;
    let uploads = 0;
    const load = Array.from({ length: CONCURRENT_UPLOADS }, async () => {
      while (!stop) {
        await upload(url, token, pdf);
        uploads++;
      }
    });
    const loaded = await probe(url, agent, LOADED_MS);
    stop = true;
    await Promise.all(load);

    const idleP99 = percentile(idle, 99);
    const loadedP99 = percentile(loaded, 99);
    const verification = await healthWhileVerifying(url, token, agent);
    return [
      verification.row(idle),
      {
        name: `/healthz while ${CONCURRENT_UPLOADS} uploads of a ${(pdf.length / 2 ** 20).toFixed(1)} MB PDF parse in the worker pool`,
        figure: `p50 ${percentile(loaded, 50).toFixed(1)} ms, p99 ${loadedP99.toFixed(1)} ms, max ${Math.max(...loaded).toFixed(1)} ms (${loaded.length} probes, ${uploads} uploads)`,
        baseline: `idle: p50 ${percentile(idle, 50).toFixed(1)} ms, p99 ${idleP99.toFixed(1)} ms`,
        ratio: loadedP99 / idleP99,
        floor: 'p99 < 100 ms',
        ok: loadedP99 < 100,
      },
    ];
  } finally {
    agent.destroy();
    await api?.stop();
    await prepared.remove();
  }
}

/**
 * Issue 18: the verify report of a 48 MB PDF of ten time-stamped signatures (ten revisions, each judged) is computed
 * in the worker pool, so /healthz keeps answering while GET esign/verify runs back to back. Figure: /healthz p99
 * meanwhile, and how long each report took; baseline: the idle probe. Floor: p99 under 100 ms.
 */
async function healthWhileVerifying(url: string, token: string, agent: http.Agent) {
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
  const verify = async () => {
    const began = performance.now();
    const response = await fetch(`${url}/api/v1/esign/verify?client_id=${session.data!.client_id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await response.json()) as { data?: { signatures: unknown[]; revisions: unknown[] } };
    if (!response.ok || body.data?.signatures.length !== VERIFIED_SIGNATURES)
      throw new Error(`esign/verify answered ${response.status}: ${JSON.stringify(body).slice(0, 500)}`);
    return { ms: performance.now() - began, revisions: body.data.revisions.length };
  };
  await verify(); // warm-up: the verify path loaded and compiled in a pool thread
  let stop = false;
  const reports: { ms: number; revisions: number }[] = [];
  const load = (async () => {
    while (!stop) reports.push(await verify());
  })();
  const loaded = await probe(url, agent, LOADED_MS);
  stop = true;
  await load;
  const p99 = percentile(loaded, 99);
  const mean = reports.reduce((sum, report) => sum + report.ms, 0) / reports.length;
  return {
    row: (idle: number[]): BenchRow => ({
      name: `/healthz while esign/verify reports on a ${(pdf.length / 2 ** 20).toFixed(1)} MB PDF of ${VERIFIED_SIGNATURES} time-stamped signatures, back to back`,
      figure: `p50 ${percentile(loaded, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...loaded).toFixed(1)} ms (${loaded.length} probes; ${reports.length} reports of ${reports[0]?.revisions} revisions, ${mean.toFixed(0)} ms each over HTTP)`,
      baseline: `idle: p50 ${percentile(idle, 50).toFixed(1)} ms, p99 ${percentile(idle, 99).toFixed(1)} ms`,
      ratio: p99 / percentile(idle, 99),
      floor: 'p99 < 100 ms',
      ok: p99 < 100,
    }),
  };
}

/** /healthz every PROBE_EVERY_MS for `durationMs`; the latency of each answer in ms. */
async function probe(url: string, agent: http.Agent, durationMs: number): Promise<number[]> {
  const latencies: number[] = [];
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    const began = performance.now();
    await new Promise<void>((resolve, reject) => {
      http
        .get(`${url}/healthz`, { agent }, (response) => {
          response.resume();
          response.on('end', () => resolve());
        })
        .on('error', reject);
    });
    latencies.push(performance.now() - began);
    await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
  }
  return latencies;
}
