import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  /** The raw body, as the signature covers it. */
  body: string;
  json: { id: string; type: string; created_at: string; data: any; [key: string]: unknown };
  at: number;
}

/** How the receiver answers one request: a status (after a delay), or no answer at all until the client gives up. */
export type Answer = { status: number; delayMs?: number; body?: string; headers?: Record<string, string> } | 'hang';

/**
 * A webhook receiver as an integrator runs one: a real HTTP server on 127.0.0.1 that records every POST and answers
 * from a script (then 200 once the script is used up).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private script: Answer[] = [];
  private server?: http.Server;
  private readonly sockets = new Set<import('node:net').Socket>();
  port = 0;

  async start(port = 0): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        this.received.push({ headers: req.headers, body, json: JSON.parse(body), at: Date.now() });
        const answer = this.script.shift() ?? { status: 200 };
        if (answer === 'hang') return;
        setTimeout(
          () =>
            res
              .writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers })
              .end(answer.body ?? `status ${answer.status}`),
          answer.delayMs ?? 0,
        );
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** The next answers, in order. */
  answer(...answers: Answer[]): void {
    this.script.push(...answers);
  }

  of(type: string): Received[] {
    return this.received.filter((request) => request.json.type === type);
  }

  async waitFor(check: (received: Received[]) => boolean, what: string, timeoutMs = 20_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (!check(this.received)) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; received ${this.received.map((r) => r.json.type).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return this.received;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/**
 * Checks `Esign-Signature` as the docs tell integrators to: `t` and every `v1`, one of which must be the hex
 * HMAC-SHA256 of "<t>.<raw body>" with the secret. Answers which of the given secrets matched.
 */
export function verifySignature(
  header: string | undefined,
  body: string,
  secrets: string[],
): { t: number; matched: string[]; v1: string[] } {
  const parts = (header ?? '').split(',').map((part) => part.split('=') as [string, string]);
  const t = Number(parts.find(([key]) => key === 't')?.[1]);
  const v1 = parts.filter(([key]) => key === 'v1').map(([, value]) => value);
  const matched = secrets.filter((secret) => {
    const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
    return v1.some((value) => value.length === expected.length && timingSafeEqual(Buffer.from(value), expected));
  });
  return { t, matched, v1 };
}
