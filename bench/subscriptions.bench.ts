import { readFileSync } from 'node:fs';
import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { EVENTS_CHANNEL } from '../src/platform/events/event-bus';
import { startBareBroadcast, type BareBroadcast } from './bare-broadcast';
import { benchServiceEnv, percentile, type BenchDatabase } from './harness';
import { probeHealth, type HealthProbe } from './health-probe';
import type { BenchRow } from './measure';
import { sized } from './mode';
import { resetPeak, spawnService, statusMB, waitFor, type ServiceProcess } from './service-process';
import { healthy, userToken } from './uploads.bench';

/** The two sizes: 500 clients held to the budget, 5,000 reported against the bare broadcast. */
const CLIENTS = sized(500, 25);
const MANY_CLIENTS = sized(5000, 100);
const QUANTITY = sized(400, 60);
/** A first, small order followed by a few clients: the API's subscription path is compiled before it is timed. */
const WARM_UP_CLIENTS = sized(20, 5);
const WARM_UP_QUANTITY = 60;
/** Connections opened at once: a burst of thousands would overrun the API's listen backlog (511) and wait on SYN retries. */
const CONNECTS_IN_FLIGHT = 100;
/** How long the clients are given, once the order is done, for its last messages. */
const SETTLE_MS = sized(3000, 1000);
const BUDGET_MS = 100;

/**
 * graphql-ws clients subscribed to one order's progress while it is procured, at 500 and at 5,000 clients. The API
 * runs in a process of its own (its memory and CPU are its own; RUN_WORKERS=false) and procurement in a worker
 * process started once every subscription is live, as in production: the events reach the API through PostgreSQL.
 * A small order followed by a few clients comes first, so that the path is compiled before it is timed. Latency: from
 * the moment PostgreSQL delivers a change's notification (seen by a plain LISTEN connection of the bench, the
 * earliest anyone can know of the commit) to the moment each client has the order as it then reads. A subscription
 * sends only answers that differ from the one before (two changes read together are one message), so each message
 * is timed from the latest notification before it, and a client missed something if its last message is not the
 * finished order. The clients run in this process: their own reading of every message is in the figure. Also
 * reported: how long the clients took to subscribe, the API's resident memory with them, its CPU over the order, and
 * /healthz asked meanwhile by a process of its own (how long the fan-out held the API's event loop).
 *
 * Baseline: the same clients on a bare `ws` server (bench/bare-broadcast.ts: one SQL read per notification, one
 * write per socket, nothing else), following another order of the same size procured the same way, in the same run.
 * Floors: 500 clients p99 < 100 ms (the budget; ratio p99 over it), none missed. 5,000 clients: none missed;
 * p99 reported against the bare broadcast's (ratio), not held to the budget: a fan-out of 5,000 socket writes and
 * 5,000 reads in this process takes this machine's 2 cores a few hundred ms for the bare server alone, and how much
 * of that the service adds depends on what else the cores do (a figure, not a floor, on a shared machine).
 */
export async function subscriptionBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  return [await followOrder(database, CLIENTS), await followOrder(database, MANY_CLIENTS)];
}

interface Followed {
  latencies: number[];
  missing: number;
  events: number;
  connectMs: number;
  connectEach: number[];
  /** From the worker's start to the order's last event. */
  orderMs: number;
}

async function followOrder(database: BenchDatabase, clientCount: number): Promise<BenchRow> {
  const databaseUrl = await database.create();
  // Small batches: many progress events while the order moves.
  const prepared = await benchServiceEnv(databaseUrl, { STAMP_PROCURE_BATCH: '20', RUN_WORKERS: 'false' });
  const url = `http://127.0.0.1:${prepared.port}`;
  let api: ServiceProcess | undefined;
  let bare: BareBroadcast | undefined;
  const probe: { health?: HealthProbe } = {};
  try {
    api = spawnService('main.js', prepared.env);
    await waitFor(api, 'the API process answering /healthz', () => healthy(url), 60_000);
    const token = await userToken(databaseUrl);
    await follow(prepared.env, url, token, WARM_UP_CLIENTS, { quantity: WARM_UP_QUANTITY });
    const idleMB = statusMB(api.pid, 'VmRSS');
    const peakReset = resetPeak(api.pid);
    const running = api;
    let connectedMB = 0;
    let cpuBefore = 0;
    const service = await follow(prepared.env, url, token, clientCount, {
      connected: () => {
        connectedMB = statusMB(running.pid, 'VmRSS');
        cpuBefore = cpuMs(running.pid);
        probe.health = probeHealth(url, { ownProcess: true });
      },
    });
    const cpu = cpuMs(api.pid) - cpuBefore;
    const healthz = await probe.health!.stop();
    delete probe.health;
    const peakMB = statusMB(api.pid, 'VmHWM');

    // The same clients, order and procurement against the bare broadcast (the API idles meanwhile).
    const orderId = await createOrder(url, token);
    bare = await startBareBroadcast(databaseUrl, orderId);
    const barePid = bare.pid;
    let bareCpuBefore = 0;
    const baseline = await follow(prepared.env, bare.url, token, clientCount, {
      orderId,
      connected: () => (bareCpuBefore = cpuMs(barePid)),
    });
    const bareCpu = cpuMs(barePid) - bareCpuBefore;

    const p99 = percentile(service.latencies, 99);
    const bareP99 = percentile(baseline.latencies, 99);
    const many = clientCount > CLIENTS;
    return {
      name: `${clientCount} graphql-ws clients, order progress (${service.events} events)`,
      figure:
        `${describe(service)}; API RSS ${idleMB.toFixed(0)} -> ${connectedMB.toFixed(0)} MB ` +
        `(${(((connectedMB - idleMB) * 1024) / clientCount).toFixed(0)} kB a client), ` +
        `${peakReset ? 'peak since connecting' : 'peak'} ${peakMB.toFixed(0)} MB; ` +
        `API CPU ${(cpu / 1000).toFixed(1)} s over the order's ${(service.orderMs / 1000).toFixed(1)} s; ` +
        `its /healthz meanwhile p99 ${percentile(healthz, 99).toFixed(0)} ms, max ${Math.max(...healthz).toFixed(0)} ms`,
      baseline:
        `bare ws broadcast (${baseline.events} events): ${describe(baseline)}; ` +
        `its CPU ${(bareCpu / 1000).toFixed(1)} s over the order's ${(baseline.orderMs / 1000).toFixed(1)} s` +
        (many ? '' : `; budget ${BUDGET_MS} ms`),
      ratio: p99 / (many ? bareP99 : BUDGET_MS),
      peakMB: peakMB - idleMB,
      floor: many ? 'none missed (p99 reported against the bare broadcast)' : `p99 < ${BUDGET_MS} ms, none missed`,
      ok: service.missing === 0 && (many || p99 < BUDGET_MS),
    };
  } finally {
    await probe.health?.stop().catch(() => undefined);
    await bare?.stop();
    await api?.stop();
    await prepared.remove();
  }
}

function describe(run: Followed): string {
  return (
    `p50 ${percentile(run.latencies, 50).toFixed(1)} ms, p99 ${percentile(run.latencies, 99).toFixed(1)} ms, ` +
    `max ${Math.max(...run.latencies).toFixed(1)} ms, ${run.missing} missed the end; ` +
    `all subscribed in ${(run.connectMs / 1000).toFixed(1)} s (each p50 ${percentile(run.connectEach, 50).toFixed(0)} ms, ` +
    `p99 ${percentile(run.connectEach, 99).toFixed(0)} ms)`
  );
}

/**
 * `clientCount` clients of `url` subscribed to an order (a new one of `quantity` stamps unless given), then a worker
 * process on the service's database procures it; `connected` runs once every subscription is live, before the
 * worker starts.
 */
async function follow(
  env: Record<string, string>,
  url: string,
  token: string,
  clientCount: number,
  options: { orderId?: string; quantity?: number; connected?: () => void },
): Promise<Followed> {
  const orderId = options.orderId ?? (await createOrder(env.PUBLIC_URL, token, options.quantity));
  // When each notification about this order reached PostgreSQL's listeners.
  const notified: number[] = [];
  const listener = new pg.Client({ connectionString: env.DATABASE_URL });
  let clients: Client[] = [];
  let worker: ServiceProcess | undefined;
  try {
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.payload?.includes(orderId)) notified.push(performance.now());
    });
    await listener.query(`listen ${EVENTS_CHANNEL}`);
    const connected = await connectClients(url, token, orderId, clientCount);
    clients = connected.clients;
    options.connected?.();
    const began = performance.now();
    worker = spawnService('worker.js', { ...env, RUN_WORKERS: 'true' });
    await waitFor(worker, `order ${orderId} procured`, () => procured(listener, orderId), 120_000);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

    // Each message answers the latest notification before it; every client ends with the finished order.
    const latencies: number[] = [];
    let missing = 0;
    for (const messages of connected.received) {
      for (const message of messages) {
        const answered = notified.findLast((at) => at <= message.at);
        if (answered !== undefined) latencies.push(message.at - answered);
      }
      if (messages.at(-1)?.pending !== 0) missing++;
    }
    return {
      latencies,
      missing,
      events: notified.length,
      connectMs: connected.ms,
      connectEach: connected.each,
      orderMs: (notified.at(-1) ?? began) - began,
    };
  } finally {
    await worker?.stop();
    await Promise.all(clients.map((client) => client.dispose()));
    await listener.end().catch(() => undefined);
  }
}

async function createOrder(url: string, token: string, quantity = QUANTITY): Promise<string> {
  const created = await fetch(`${url}/api/v1/stamps/create-order`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      state_code: 'MH',
      article_id: 'MH-5',
      first_party_name: 'Bench',
      second_party_name: 'Bench',
      stamp_duty_amount: 100,
      consideration_amount: 1,
      quantity,
      mock: true,
    }),
  });
  const body = (await created.json()) as { data?: { client_id?: string } };
  if (!created.ok || !body.data?.client_id) throw new Error(`create-order answered ${created.status}: ${JSON.stringify(body)}`);
  return body.data.client_id;
}

interface Received {
  at: number;
  pending: number;
}

/**
 * `count` clients, CONNECTS_IN_FLIGHT at a time, each subscribed to the order: resolves once every one has its
 * starting state (the subscription is live then). `received[i]` collects client i's messages after that one.
 */
async function connectClients(url: string, token: string, orderId: string, count: number) {
  const query = `subscription ($id: String!) { stampOrderUpdated(client_id: $id) { client_id status_counts { pending available } } }`;
  const clients: Client[] = [];
  const received: Received[][] = Array.from({ length: count }, () => []);
  const each: number[] = [];
  const began = performance.now();
  let next = 0;
  const subscribeOne = (index: number) =>
    new Promise<void>((resolve, reject) => {
      const opened = performance.now();
      const client = createClient({
        url: `${url.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${token}` },
        retryAttempts: 0,
        lazy: false,
      });
      clients.push(client);
      // The first message is the order as it stood when subscribed; the ones after it answer notifications.
      let started = false;
      client.subscribe(
        { query, variables: { id: orderId } },
        {
          next: (result) => {
            const order = (result.data as { stampOrderUpdated?: { status_counts: { pending: number } } } | undefined)
              ?.stampOrderUpdated;
            if (started) received[index].push({ at: performance.now(), pending: order?.status_counts.pending ?? -1 });
            else {
              started = true;
              each.push(performance.now() - opened);
              if (order) resolve();
              else reject(new Error(`client ${index} started with ${JSON.stringify(result)}`));
            }
          },
          error: (error) => reject(error instanceof Error ? error : new Error(`client ${index}: ${JSON.stringify(error)}`)),
          complete: () => undefined,
        },
      );
    });
  await Promise.all(
    Array.from({ length: Math.min(CONNECTS_IN_FLIGHT, count) }, async () => {
      while (next < count) await subscribeOne(next++);
    }),
  );
  return { clients, received, each, ms: performance.now() - began };
}

async function procured(db: pg.Client, orderId: string): Promise<boolean> {
  const { rows } = await db.query(
    `select count(*)::int as pending from stamp_instances where order_id = $1 and status = 'pending'`,
    [orderId],
  );
  return rows[0].pending === 0;
}

/** CPU time (user + system) the process has used, in ms, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name in parentheses may hold spaces: fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
