import http from 'node:http';
import { heavyPdf } from '../test/helpers/heavy-pdf';
import { benchServiceEnv, percentile, type BenchDatabase } from './harness';
import type { BenchRow } from './measure';
import { spawnService, waitFor, type ServiceProcess } from './service-process';
import { healthy, upload, userToken } from './uploads.bench';

/** How long /healthz is sampled, idle and under load, and how often. */
const IDLE_MS = 3_000;
const LOADED_MS = 12_000;
const PROBE_EVERY_MS = 20;
/** Uploads in flight at once, each a PDF whose parsing takes pdf-lib about 3 s here. */
const CONCURRENT_UPLOADS = 3;
const HEAVY_OBJECTS = 100_000;

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
    return [
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
