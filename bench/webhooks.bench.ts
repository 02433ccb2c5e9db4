import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type PgBoss from 'pg-boss';
import { recordWebhookEvent } from '../src/modules/webhooks';
import { newId } from '../src/platform/ids';
import { SecretBox } from '../src/platform/crypto/secret-box';
import { percentile, startBenchApp, type BenchDatabase } from './harness';
import type { BenchRow } from './measure';
import { sized } from './mode';

/** Events per run, spread over resources (a session's events go in order, sessions in parallel). */
const EVENTS = sized(10_000, 100);
const RESOURCES = sized(1_000, 10);
const WARM_UP_EVENTS = sized(200, 10);
/** Transactions committing events at once: the producer is not what is measured. */
const PRODUCERS = 8;
/** The service's deliver queue runs 8 jobs at once per process; the bare loop gets as many workers. */
const BARE_WORKERS = 8;
const RUN_LIMIT_MS = 180_000;
/** The latency rows: events at a steady rate both machineries keep up with, so no backlog is measured. */
const PACED_EVENTS = sized(500, 25);
const PACED_RATE = 50;

/** Waits until no job of the queue is waiting. */
async function idle(boss: PgBoss, queue: string): Promise<void> {
  const deadline = Date.now() + RUN_LIMIT_MS;
  while ((await boss.getQueueSize(queue)) > 0) {
    if (Date.now() > deadline) throw new Error(`${queue} still has jobs after ${RUN_LIMIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A receiver that answers 200 at once and notes when each event arrived. */
async function receiver() {
  const arrived = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const id = String(req.headers['esign-event-id'] ?? '');
    req.resume();
    req.on('end', () => {
      if (!arrived.has(id)) arrived.set(id, performance.now());
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    arrived,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

interface Run {
  seconds: number;
  latencies: number[];
}

function throughput(run: Run): string {
  return `${(run.latencies.length / run.seconds).toFixed(0)} events/s (${run.seconds.toFixed(1)} s, commit to receiver p99 ${percentile(run.latencies, 99).toFixed(0)} ms with the backlog)`;
}

function latency(run: Run): string {
  return `commit to receiver p50 ${percentile(run.latencies, 50).toFixed(0)} ms, p99 ${percentile(run.latencies, 99).toFixed(0)} ms`;
}

/**
 * `count` `emit` calls, from PRODUCERS at once as fast as they go, or at `rate` a second; notes when each id was
 * committed and waits until all arrived.
 */
async function measure(
  count: number,
  emit: (index: number) => Promise<string>,
  arrived: Map<string, number>,
  rate?: number,
): Promise<Run> {
  const committed = new Map<string, number>();
  const began = performance.now();
  let next = 0;
  if (rate) {
    const sends: Promise<void>[] = [];
    for (let index = 0; index < count; index++) {
      const due = began + (index * 1000) / rate;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
      sends.push(emit(index).then((id) => void committed.set(id, performance.now())));
    }
    await Promise.all(sends);
  } else {
    await Promise.all(
      Array.from({ length: PRODUCERS }, async () => {
        while (next < count) {
          const id = await emit(next++);
          committed.set(id, performance.now());
        }
      }),
    );
  }
  const deadline = Date.now() + RUN_LIMIT_MS;
  while ([...committed.keys()].some((id) => !arrived.has(id))) {
    if (Date.now() > deadline)
      throw new Error(`only ${[...committed.keys()].filter((id) => arrived.has(id)).length} of ${count} events arrived`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const last = Math.max(...[...committed.keys()].map((id) => arrived.get(id)!));
  return {
    seconds: (last - began) / 1000,
    latencies: [...committed].map(([id, at]) => arrived.get(id)! - at),
  };
}

/**
 * Issue 20: 10,000 events (1,000 resources, 10 each) delivered to a local receiver through the service's webhook
 * machinery (event and delivery rows and a job per event in the change's transaction, leases, signed POSTs, the
 * attempt log), against a bare pg-boss loop in the same run: `send` of a job per event, 8 workers POSTing its JSON.
 * Figures: events/s from the first commit to the last arrival (producers as fast as they go, so a backlog builds),
 * and the commit-to-receiver latency at a steady 50 events/s.
 */
export async function webhookBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const app = await startBenchApp(database, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  const target = await receiver();
  try {
    const { services } = app;
    const { user_id: userId } = await app.createUser();
    // Production takes https targets only: the bench's receiver is plain http on loopback, so its endpoint row is
    // written directly (delivery checks addresses, which WEBHOOK_ALLOW_PRIVATE lifts, not the scheme).
    const box = new SecretBox(services.config.secretsEncryptionKey, 'webhook-signing-secret');
    await services.orm.em
      .fork()
      .getConnection()
      .execute(`insert into webhook_endpoints (id, user_id, url, events, secret_sealed) values (?, ?, ?, '["*"]', ?)`, [
        newId('whk'),
        userId,
        target.url,
        box.seal('whsec_bench'),
      ]);
    const emit = (index: number) =>
      services.orm.em.fork().transactional(async (tx) => {
        const id = await recordWebhookEvent(services, tx, {
          userId,
          type: 'wallet.charged',
          resourceId: `bench_resource_${index % RESOURCES}`,
          data: { entry_id: `wle_bench_${index}`, amount: '-110.00', description: 'bench charge' },
        });
        return id!;
      });
    await measure(WARM_UP_EVENTS, emit, target.arrived);
    const service = await measure(EVENTS, emit, target.arrived);
    // The burst's queues were drained by the first job of each resource: the jobs of the events it carried are left,
    // with nothing to do. The steady rate is measured once they are gone, as the baseline's is.
    await idle(services.boss, 'webhooks.deliver');
    const servicePaced = await measure(PACED_EVENTS, emit, target.arrived, PACED_RATE);

    // The baseline: what pg-boss alone does for the same work, send in a transaction-less call, POST, done.
    const queue = 'bench-bare-webhooks';
    await services.boss.createQueue(queue);
    const workers: string[] = [];
    for (let i = 0; i < BARE_WORKERS; i++) {
      let workerId: string | undefined;
      workerId = await services.boss.work<{ id: string; body: string }>(
        queue,
        { batchSize: 1, pollingIntervalSeconds: services.config.queuePollIntervalSeconds },
        async ([job]: PgBoss.Job<{ id: string; body: string }>[]) => {
          const response = await fetch(target.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'esign-event-id': job.data.id },
            body: job.data.body,
          });
          await response.arrayBuffer();
          if (workerId) services.boss.notifyWorker(workerId);
        },
      );
      workers.push(workerId);
    }
    const bareEmit = async (index: number) => {
      const id = `bare_${index}_${Math.random().toString(36).slice(2)}`;
      await services.boss.send(queue, { id, body: JSON.stringify({ id, type: 'wallet.charged', data: { index } }) });
      return id;
    };
    await measure(WARM_UP_EVENTS, bareEmit, target.arrived);
    const bare = await measure(EVENTS, bareEmit, target.arrived);
    await idle(services.boss, queue);
    const barePaced = await measure(PACED_EVENTS, bareEmit, target.arrived, PACED_RATE);
    for (const workerId of workers) await services.boss.offWork({ id: workerId });

    return [
      {
        name: `webhooks: ${EVENTS} events (${RESOURCES} resources, ${PRODUCERS} producers) to a local receiver`,
        figure: throughput(service),
        baseline: `${throughput(bare)}; bare pg-boss send + POST`,
        ratio: service.latencies.length / service.seconds / (bare.latencies.length / bare.seconds),
      },
      {
        name: `webhooks: latency at ${PACED_RATE} events/s (${PACED_EVENTS} events)`,
        figure: latency(servicePaced),
        baseline: `${latency(barePaced)}; bare pg-boss send + POST`,
        ratio: percentile(servicePaced.latencies, 99) / percentile(barePaced.latencies, 99),
      },
    ];
  } finally {
    await target.close();
    await app.close();
  }
}
