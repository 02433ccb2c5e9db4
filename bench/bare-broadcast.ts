/**
 * The subscriptions benchmark's baseline: the least a process can do to tell graphql-ws clients that an order moved.
 * A bare `ws` server speaking just enough of the graphql-transport-ws protocol (connection_init, subscribe, ping),
 * LISTENing on the service's channel; on each notification about its order, one SQL read of the order's counts,
 * the answer serialised once, and one `next` message written to every subscribed socket (only when the answer
 * changed, as the service does). No authentication, no GraphQL, no ORM.
 *
 * Run as a process of its own (`node dist-bench/bench/bare-broadcast.js`) with DATABASE_URL and ORDER_ID; it prints
 * `listening <port>` once it listens.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { WebSocketServer, type WebSocket } from 'ws';
import { EVENTS_CHANNEL } from '../src/platform/events/event-bus';

async function main(): Promise<void> {
  const orderId = process.env.ORDER_ID!;
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const subscribers = new Map<WebSocket, string>();
  let answer = await read(db, orderId);
  db.on('notification', (message) => {
    if (!message.payload?.includes(orderId)) return;
    void read(db, orderId).then((next) => {
      if (next === answer) return;
      answer = next;
      for (const [socket, id] of subscribers) socket.send(`{"id":${JSON.stringify(id)},"type":"next","payload":${answer}}`);
    });
  });
  await db.query(`listen ${EVENTS_CHANNEL}`);

  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => 'graphql-transport-ws' });
  server.on('connection', (socket) => {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; id?: string };
      if (message.type === 'connection_init') socket.send('{"type":"connection_ack"}');
      else if (message.type === 'ping') socket.send('{"type":"pong"}');
      else if (message.type === 'subscribe' && message.id) {
        subscribers.set(socket, message.id);
        socket.send(`{"id":${JSON.stringify(message.id)},"type":"next","payload":${answer}}`);
      }
    });
    socket.on('close', () => subscribers.delete(socket));
  });
  await once(server, 'listening');
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
}

/** The payload the service's subscription answers with, for the selection the benchmark asks. */
async function read(db: pg.Client, orderId: string): Promise<string> {
  const { rows } = await db.query<{ status: string; n: number }>(
    'select status, count(*)::int as n from stamp_instances where order_id = $1 group by status',
    [orderId],
  );
  const count = (status: string) => rows.find((row) => row.status === status)?.n ?? 0;
  return JSON.stringify({
    data: {
      stampOrderUpdated: { client_id: orderId, status_counts: { pending: count('pending'), available: count('available') } },
    },
  });
}

export interface BareBroadcast {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** This file in a process of its own, once it listens. */
export async function startBareBroadcast(databaseUrl: string, orderId: string): Promise<BareBroadcast> {
  const child = spawn(process.execPath, [__filename], {
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, ORDER_ID: orderId },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = once(child, 'exit');
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const listening = /listening (\d+)/.exec(output);
      if (listening) resolve(Number(listening[1]));
    });
    void exited.then(() => reject(new Error(`the bare broadcast server ended first: ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      process.removeListener('exit', killOnExit);
    },
  };
}

if (require.main === module) {
  process.once('SIGTERM', () => process.exit(0));
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
