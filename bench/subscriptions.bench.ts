import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { EVENTS_CHANNEL } from '../src/platform/events/event-bus';
import { percentile, startBenchApp, type BenchDatabase } from './harness';
import type { BenchRow } from './measure';
import { sized } from './mode';

const CLIENTS = sized(500, 25);
const QUANTITY = sized(400, 60);
/** How long the clients are given, once the order is done, for its last messages. */
const SETTLE_MS = sized(2000, 1000);

/**
 * 500 graphql-ws clients subscribed to one order's progress while it is procured. Latency: from the moment
 * PostgreSQL delivers a change's notification (seen by a plain LISTEN connection of the bench, the earliest
 * anyone can know of the commit) to the moment each client has the order as it then reads. A subscription sends
 * only answers that differ from the one before (two changes read together are one message), so each message is
 * timed from the latest notification before it, and a client missed something if its last message is not the
 * finished order. Floor: p99 < 100 ms, none missed. The ratio is p99 over that 100 ms budget.
 */
export async function subscriptionBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  // Small batches: many progress events while the order moves.
  const app = await startBenchApp(database, { STAMP_PROCURE_BATCH: '20', RUN_WORKERS: 'false' });
  const clients: Client[] = [];
  let worker: ChildProcess | undefined;
  const listener = new pg.Client({ connectionString: app.databaseUrl });
  try {
    const user = await app.createUser();
    const created = await fetch(`${app.url}/api/v1/stamps/create-order`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        state_code: 'MH',
        article_id: 'MH-5',
        first_party_name: 'Bench',
        second_party_name: 'Bench',
        stamp_duty_amount: 100,
        consideration_amount: 1,
        quantity: QUANTITY,
        mock: true,
      }),
    });
    const orderId = ((await created.json()) as { data: { client_id: string } }).data.client_id;

    // When each notification about this order reached PostgreSQL's listeners.
    const notified: number[] = [];
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.payload?.includes(orderId)) notified.push(performance.now());
    });
    await listener.query(`listen ${EVENTS_CHANNEL}`);

    const received: { at: number; pending: number }[][] = Array.from({ length: CLIENTS }, () => []);
    const query = `subscription ($id: String!) { stampOrderUpdated(client_id: $id) { client_id status_counts { pending available } } }`;
    let acknowledged = 0;
    let subscribed = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, (_, index) => {
        const client = createClient({
          url: `${app.url.replace('http', 'ws')}/graphql`,
          webSocketImpl: WebSocket,
          connectionParams: { authorization: `Bearer ${user.token}` },
          retryAttempts: 0,
          lazy: false,
          on: { connected: () => acknowledged++ },
        });
        clients.push(client);
        // The first message is the order as it stood when subscribed; the ones after it answer notifications.
        let started = false;
        client.subscribe(
          { query, variables: { id: orderId } },
          {
            next: (result) => {
              const pending = (result.data as { stampOrderUpdated: { status_counts: { pending: number } } } | undefined)
                ?.stampOrderUpdated.status_counts.pending;
              if (started) received[index].push({ at: performance.now(), pending: pending ?? -1 });
              else {
                started = true;
                subscribed++;
              }
            },
            error: () => undefined,
            complete: () => undefined,
          },
        );
        return new Promise((resolve) => setTimeout(resolve, 0));
      }),
    );
    const connectDeadline = Date.now() + 60_000;
    while (acknowledged < CLIENTS && Date.now() < connectDeadline) await new Promise((resolve) => setTimeout(resolve, 50));
    // Every subscription is live once its starting state has arrived.
    while (subscribed < CLIENTS && Date.now() < connectDeadline) await new Promise((resolve) => setTimeout(resolve, 50));

    // Procurement starts now, in a worker process of its own, as in production: the events reach this
    // process through PostgreSQL.
    worker = spawn(process.execPath, [path.resolve(__dirname, '../src/worker.js')], {
      env: { PATH: process.env.PATH, ...app.env, RUN_WORKERS: 'true' },
      stdio: 'ignore',
    });
    const done = Date.now() + 120_000;
    for (;;) {
      const [row] = await app.services.orm.em
        .fork()
        .getConnection()
        .execute<{ pending: number }[]>(
          `select count(*)::int as pending from stamp_instances where order_id = ? and status = 'pending'`,
          [orderId],
        );
      if (row.pending === 0 || Date.now() > done) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

    // Each message answers the latest notification before it; every client ends with the finished order.
    const latencies: number[] = [];
    let missing = 0;
    for (const messages of received) {
      for (const message of messages) {
        const answered = notified.findLast((at) => at <= message.at);
        if (answered !== undefined) latencies.push(message.at - answered);
      }
      if (messages.at(-1)?.pending !== 0) missing++;
    }
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    return [
      {
        name: `${CLIENTS} graphql-ws clients, order progress (${notified.length} events)`,
        figure: `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms${missing ? `, ${missing} clients missed the end` : ''}`,
        baseline: 'budget 100 ms from the notification',
        ratio: p99 / 100,
        floor: 'p99 < 100 ms, none missed',
        ok: p99 < 100 && missing === 0,
      },
    ];
  } finally {
    worker?.kill('SIGTERM');
    await Promise.all(clients.map((client) => client.dispose()));
    await listener.end().catch(() => undefined);
    await app.close();
  }
}
