import type { AddressInfo } from 'node:net';
import express from 'express';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** The SMTP envelope recipients. */
  to: string[];
  /** The user name the client authenticated with. */
  user: string | undefined;
  raw: string;
  parsed: ParsedMail;
}

export interface TestSmtpServer {
  /** smtp://user:secret@127.0.0.1:PORT */
  url: string;
  messages: ReceivedMail[];
  /** Refuses every recipient for which this returns true (550). */
  refuse: (recipient: string) => boolean;
  close(): Promise<void>;
}

/** A real SMTP server in this process: accepts any credentials, keeps every message it was given. */
export async function startSmtpServer(options: { starttls?: boolean } = {}): Promise<TestSmtpServer> {
  const state: TestSmtpServer = {
    url: '',
    messages: [],
    refuse: () => false,
    close: async () => undefined,
  };
  const server = new SMTPServer({
    // Without starttls: no TLS on offer, so clients authenticate in clear (loopback only).
    disabledCommands: options.starttls ? [] : ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username });
    },
    onRcptTo(address, _session, callback) {
      callback(state.refuse(address.address) ? Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }) : null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw)
          .then((parsed) => {
            state.messages.push({
              to: session.envelope.rcptTo.map((r) => r.address),
              user: session.user as string | undefined,
              raw,
              parsed,
            });
            callback();
          })
          .catch(callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  state.url = `smtp://mailer:secret@127.0.0.1:${port}`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

export interface TestHttpSink {
  url: string;
  requests: { path: string; authorization: string | undefined; idempotencyKey: string | undefined; body: any }[];
  /** The status the next requests are answered with. */
  status: number;
  close(): Promise<void>;
}

/** A tiny HTTP gateway (SMS / WhatsApp) that records what it is sent. */
export async function startHttpSink(): Promise<TestHttpSink> {
  const app = express();
  const sink: TestHttpSink = { url: '', requests: [], status: 200, close: async () => undefined };
  app.post('/{*path}', express.json(), (req, res) => {
    sink.requests.push({
      path: req.path,
      authorization: req.headers.authorization,
      idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      body: req.body,
    });
    res.status(sink.status).json({ ok: sink.status < 300 });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sink;
}

/** Polls until `check` returns a value (not undefined, null or false) or the time is up. */
export async function eventually<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
