/**
 * Scaled out on real parts (issue 37): three API processes and two worker processes of the built service behind
 * Debian's HAProxy (round robin, /healthz checks), with Debian's PgBouncer in transaction mode between them and
 * PostgreSQL, each process's LISTEN connection straight to PostgreSQL (DATABASE_LISTEN_URL). Signing, procurement,
 * subscriptions, webhooks and rate limits all go through the front, and every invariant is checked on the database:
 * no double charge, no stamp held twice, every subscriber hears every change whichever process raised it, each
 * webhook event delivered once per attempt and signed, one quota for the three processes.
 *
 * It also measures what docs/scaling.md's capacity model quotes (CPU, PgBouncer's transaction and statement counts,
 * blob bytes) and prints them; nothing is asserted about time.
 */
import { randomBytes } from 'node:crypto';
import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createUser } from '../../src/modules/users/create-user';
import { issueAccessToken } from '../../src/modules/users/access-tokens';
import { creditWallet } from '../../src/modules/wallet/credit-wallet';
import type { TestApp, TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import {
  createSession,
  createStampOrder,
  FOUR_PAGE_PDF,
  initializeEsign,
  sessionBody,
  signAsAadhaar,
  signatureAt,
  signerInput,
  uploadPdf,
  type SessionJson,
} from '../helpers/factories';
import { longTermTailProblems, signaturesOf } from '../helpers/pdf-signatures';
import { until } from '../helpers/until';
import { verifySignature, WebhookReceiver } from '../helpers/webhook-receiver';
import { findBinary, Topology, type PoolStats, type Proc } from './topology';

const HAPROXY = findBinary('haproxy');
const PGBOUNCER = findBinary('pgbouncer');
const MISSING = [!HAPROXY && 'haproxy', !PGBOUNCER && 'pgbouncer'].filter(Boolean) as string[];
if (MISSING.length > 0) {
  console.warn(
    `test/scale/scaled-out.test.ts is skipped: ${MISSING.join(' and ')} not installed (Debian: apt-get install -y haproxy pgbouncer)`,
  );
}

/** Small, so that the shared count is seen to stop a burst spread over three processes. */
const RATE_LIMIT = 30;
const ENV = {
  RATE_LIMIT_PER_TOKEN: String(RATE_LIMIT),
  RATE_LIMIT_PER_SIGNER: '1000000',
  RATE_LIMIT_PER_ADDRESS: '1000000',
  QUEUE_POLL_INTERVAL_SECONDS: '0.5',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  // A vendor slow enough that one worker cannot take every order alone, refusing some stamps (refunds).
  STAMP_VENDOR_LATENCY_MS: '100',
  STAMP_VENDOR_REJECTION_RATE: '0.1',
  WORKER_THREADS: '1',
};

/** Duty 100 + the default fee 10, in paise, per stamp of createStampOrder's defaults (MH-5). */
const STAMP_PAISE = 11_000n;

interface Usage {
  at: number;
  cpu: Map<string, number>;
  pools: Map<string, PoolStats>;
  blobs: { bytes: number; files: number };
}

interface Delta {
  seconds: number;
  apiCpuMs: number;
  workerCpuMs: number;
  cpuMs: Record<string, number>;
  api: PoolStats;
  worker: PoolStats;
  pools: Record<string, PoolStats>;
  blobBytes: number;
  blobFiles: number;
}

const states = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);

describe.skipIf(MISSING.length > 0)(
  'scaled out: 3 API + 2 worker processes, HAProxy in front, PgBouncer (transaction mode)',
  () => {
    const topology = new Topology({ haproxy: HAPROXY!, pgbouncer: PGBOUNCER! }, ENV);
    const receiver = new WebhookReceiver();
    /** HAProxy's address, in the shape test/helpers' clients take. */
    let front: TestApp;
    const secrets = new Map<string, string>();
    const endpoints: string[] = [];
    const sockets: Client[] = [];
    const report: Record<string, Delta> = {};
    const per: Record<string, string> = {};

    const sql = async <T = any>(query: string, params: unknown[] = []) =>
      (await topology.orm!.em.fork().getConnection().execute(query, params)) as T[];

    async function usage(): Promise<Usage> {
      return {
        at: Date.now(),
        cpu: new Map(topology.processes.map((proc) => [proc.name, topology.cpuMs(proc)])),
        pools: await topology.poolStats(),
        blobs: await topology.blobUsage(),
      };
    }

    function delta(before: Usage, after: Usage): Delta {
      const sum = (procs: Proc[], of: (name: string) => number) => procs.reduce((total, proc) => total + of(proc.name), 0);
      const pool = (name: string, key: keyof PoolStats) =>
        (after.pools.get(name)?.[key] ?? 0) - (before.pools.get(name)?.[key] ?? 0);
      const cpu = (name: string) => after.cpu.get(name)! - before.cpu.get(name)!;
      return {
        seconds: (after.at - before.at) / 1000,
        apiCpuMs: sum(topology.apis, cpu),
        workerCpuMs: sum(topology.workers, cpu),
        cpuMs: Object.fromEntries(topology.processes.map((proc) => [proc.name, cpu(proc.name)])),
        api: { xacts: sum(topology.apis, (n) => pool(n, 'xacts')), queries: sum(topology.apis, (n) => pool(n, 'queries')) },
        worker: {
          xacts: sum(topology.workers, (n) => pool(n, 'xacts')),
          queries: sum(topology.workers, (n) => pool(n, 'queries')),
        },
        pools: Object.fromEntries(
          topology.processes.map((proc) => [proc.name, { xacts: pool(proc.name, 'xacts'), queries: pool(proc.name, 'queries') }]),
        ),
        blobBytes: after.blobs.bytes - before.blobs.bytes,
        blobFiles: after.blobs.files - before.blobs.files,
      };
    }

    /** `run` between two readings of every process's CPU, PgBouncer's counts and the blob store. */
    async function measured<T>(name: string, run: () => Promise<T>): Promise<T> {
      const before = await usage();
      const result = await run();
      report[name] = delta(before, await usage());
      return result;
    }

    /** A user with a webhook endpoint for every event, made on the database (there is no sign-up route). */
    async function newUser(label: string): Promise<TestUser> {
      const user = await createUser(topology.orm!.em.fork(), { email: `${label}-${randomBytes(4).toString('hex')}@example.com` });
      const hook = await rest<{ endpoint_id: string; secret: string }>(front, 'POST', '/webhooks/create', {
        token: user.token,
        json: { url: receiver.url, events: ['*'] },
      });
      expect(hook.status, JSON.stringify(hook.body)).toBe(200);
      secrets.set(hook.body.data!.endpoint_id, hook.body.data!.secret);
      endpoints.push(hook.body.data!.endpoint_id);
      return user;
    }

    /** A signer's signature through the front, with which API process took it. */
    async function sign(token: string): Promise<{ status: number; servedBy: string; body: any }> {
      const response = await fetch(new URL('/signer-api/sign', topology.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ consent: true }),
      });
      return { status: response.status, servedBy: response.headers.get('x-served-by') ?? '', body: await response.json() };
    }

    /** A graphql-ws client through the front; `servedBy` names the API process its socket landed on. */
    function socket(token: string): { client: Client; servedBy: string[] } {
      const servedBy: string[] = [];
      class Tracked extends WebSocket {
        constructor(address: string | URL, protocols?: string | string[]) {
          super(address, protocols);
          this.once('upgrade', (response) => servedBy.push(String(response.headers['x-served-by'])));
        }
      }
      const client = createClient({
        url: `${topology.url.replace('http', 'ws')}/graphql`,
        webSocketImpl: Tracked,
        connectionParams: { authorization: `Bearer ${token}` },
        retryAttempts: 0,
      });
      sockets.push(client);
      return { client, servedBy };
    }

    /** Follows one subscription: every answer in order, and errors. */
    function follow<T>(client: Client, query: string, id: string, pick: (data: any) => T): { seen: T[]; errors: unknown[] } {
      const seen: T[] = [];
      const errors: unknown[] = [];
      client.subscribe(
        { query, variables: { id } },
        {
          next: (result) => {
            if (result.errors) errors.push(...result.errors);
            if (result.data) seen.push(pick(result.data));
          },
          error: (error) => errors.push(error),
          complete: () => undefined,
        },
      );
      return { seen, errors };
    }

    beforeAll(async () => {
      await receiver.start();
      try {
        await topology.start();
      } catch (error) {
        throw new Error(`the topology did not start: ${(error as Error).message}\n${topology.diagnostics()}`);
      }
      front = { url: topology.url } as unknown as TestApp;
    }, 300_000);

    afterEach(({ task }) => {
      if (task.result?.state !== 'fail') return;
      const abnormal = topology.haproxyAbnormal();
      if (abnormal.length > 0) console.warn(`HAProxy, requests that did not end normally:\n${abnormal.slice(-30).join('\n')}`);
      console.warn(topology.diagnostics());
    });

    afterAll(async () => {
      await Promise.all(sockets.map((client) => client.dispose()));
      await topology.stop();
      await receiver.stop();
    }, 120_000);

    it('runs every process through PgBouncer, with HAProxy spreading requests over the three API processes', async () => {
      const servers = await topology.haproxyServers();
      expect(servers.map((server) => [server.name, server.status])).toEqual([
        ['api1', 'UP'],
        ['api2', 'UP'],
        ['api3', 'UP'],
      ]);
      const answered = new Set<string>();
      for (let n = 0; n < 6; n++) {
        const response = await fetch(`${topology.url}/healthz`);
        expect(response.status).toBe(200);
        answered.add(response.headers.get('x-served-by')!);
      }
      expect([...answered].sort()).toEqual(['api1', 'api2', 'api3']);
      // Every process's pool goes through PgBouncer: each alias has served transactions (migrations found nothing to
      // do, pg-boss started, queues created).
      const pools = await topology.poolStats();
      for (const proc of topology.processes) expect(pools.get(proc.alias)?.xacts ?? 0, proc.alias).toBeGreaterThan(0);
      // No process logged a database error starting up.
      for (const proc of topology.processes) expect(topology.logLines(proc, /"level":(50|60)/), proc.name).toEqual([]);
    });

    it('LISTEN needs a session: through the transaction pool a listener hears nothing, straight to PostgreSQL every notification', async () => {
      const channel = `scale_${randomBytes(4).toString('hex')}`;
      const pooled = new pg.Client({ connectionString: topology.bouncerUrl('api1') });
      const direct = new pg.Client({ connectionString: topology.directUrl });
      const senders = new pg.Pool({ connectionString: topology.bouncerUrl('api1'), max: 3 });
      const heard = { pooled: 0, direct: 0 };
      pooled.on('notification', () => heard.pooled++);
      direct.on('notification', () => heard.direct++);
      try {
        await Promise.all([pooled.connect(), direct.connect()]);
        await pooled.query(`listen ${channel}`);
        await direct.query(`listen ${channel}`);
        // As the service publishes: pg_notify in a transaction on the pool, heard at commit.
        for (let n = 0; n < 5; n++) {
          const sender = await senders.connect();
          try {
            await sender.query('begin');
            await sender.query('select pg_notify($1, $2)', [channel, String(n)]);
            await sender.query('commit');
          } finally {
            sender.release();
          }
        }
        await until(() => heard.direct === 5, 'the direct listener to hear every notification');
        // A round trip of the pooled listener after that: a notification its session had queued would come first.
        await pooled.query('select 1');
        expect(heard.pooled).toBe(0);
      } finally {
        await Promise.all([pooled.end(), direct.end(), senders.end()]);
      }
    });

    it('signing: suresign and Aadhaar signers complete sessions wherever each request lands; the signed PDFs download', async () => {
      const owner = await newUser('signing');
      const servedBy: string[] = [];
      const completed = await measured('signing', async () => {
        const file = await uploadPdf(front, owner.token);
        const twoSuresign = () =>
          createSession(
            front,
            owner.token,
            sessionBody(file, {
              signers: [
                signerInput({ full_name: 'Asha Rao', elements: [signatureAt(0, 72, 640)] }),
                signerInput({ full_name: 'Vikram Singh', email: 'vikram@example.com', elements: [signatureAt(0, 300, 640)] }),
              ],
            }),
          );
        const sessions = await Promise.all([twoSuresign(), twoSuresign(), twoSuresign()]);
        const mixed = await createSession(
          front,
          owner.token,
          sessionBody(file, {
            signers: [
              signerInput({ full_name: 'Meera Iyer', sign_type: 'aadhaar', elements: [signatureAt(0, 72, 640)] }),
              signerInput({ full_name: 'Vikram Singh', email: 'vikram@example.com', elements: [signatureAt(0, 300, 640)] }),
            ],
          }),
        );
        // The sessions side by side; each one's signers in turn.
        await Promise.all([
          ...sessions.map(async (session) => {
            for (const signer of session.signers) {
              const signed = await sign(signer.token);
              expect(signed.status, JSON.stringify(signed.body)).toBe(200);
              servedBy.push(signed.servedBy);
            }
          }),
          (async () => {
            // The Aadhaar signer's browser goes signer API -> ESP gateway pages -> back, each request anywhere.
            const aadhaar = await signAsAadhaar(front, mixed.signers[0]!.token);
            expect(aadhaar.status, JSON.stringify(aadhaar.body)).toBe(200);
            const signed = await sign(mixed.signers[1]!.token);
            expect(signed.status, JSON.stringify(signed.body)).toBe(200);
            servedBy.push(signed.servedBy);
          })(),
        ]);
        return [...sessions, mixed];
      });
      expect(new Set(servedBy).size).toBeGreaterThan(1);

      for (const session of completed) {
        const details = await rest<SessionJson>(front, 'GET', '/esign/details', {
          token: owner.token,
          query: { client_id: session.client_id },
        });
        expect(details.body.data).toMatchObject({ status: 'completed', signer_idx: 2 });
        const link = await rest<{ url: string }>(front, 'GET', '/esign/download-pdf', {
          token: owner.token,
          query: { client_id: session.client_id },
        });
        expect(link.status).toBe(200);
        // Links are made with PUBLIC_URL: the front, whichever process serves the bytes from the shared store.
        expect(link.body.data!.url.startsWith(`${topology.url}/`)).toBe(true);
        const pdf = Buffer.from(await (await fetch(link.body.data!.url)).arrayBuffer());
        expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
        const signatures = await signaturesOf(pdf);
        expect(signatures).toHaveLength(2);
        for (const signature of signatures) {
          expect(
            signature.verification.digestValid && signature.verification.signatureValid,
            signature.verification.problems.join('; '),
          ).toBe(true);
        }
        expect(await longTermTailProblems(pdf)).toEqual([]);
      }
      const cost = report.signing!;
      per['signing: documents completed'] = String(completed.length);
      per[
        `signing: blob bytes per completed 2-signer document (the ${FOUR_PAGE_PDF.length}-byte 4-page upload counted once for all)`
      ] = String(Math.round(cost.blobBytes / completed.length));
      per['signing: blob files per completed document'] = (cost.blobFiles / completed.length).toFixed(2);
    }, 240_000);

    it('procurement: concurrent orders from many requests, procured by the worker processes: one charge per order, never below zero', async () => {
      const buyer = await newUser('buyer');
      const PER_ORDER = 10;
      const ORDERS = 12;
      const AFFORDABLE = 9;
      const orderPaise = STAMP_PAISE * BigInt(PER_ORDER);
      await creditWallet(topology.orm!.em.fork(), buyer.user_id, orderPaise * BigInt(AFFORDABLE));
      const key = `order-${randomBytes(6).toString('hex')}`;
      const body = {
        state_code: 'MH',
        article_id: 'MH-5',
        first_party_name: 'Same',
        second_party_name: 'Request',
        stamp_duty_amount: 100,
        consideration_amount: 1000,
        quantity: PER_ORDER,
      };

      const orderIds = await measured('procurement', async () => {
        const [plain, repeated] = await Promise.all([
          Promise.all(
            Array.from({ length: ORDERS }, (_, i) =>
              createStampOrder(front, buyer.token, { quantity: PER_ORDER, first_party_name: `Party ${i}` }),
            ),
          ),
          // The same order six times with one Idempotency-Key, over the three processes at once.
          Promise.all(
            Array.from({ length: 6 }, () =>
              rest<{ client_id: string }>(front, 'POST', '/stamps/create-order', {
                token: buyer.token,
                json: body,
                headers: { 'Idempotency-Key': key },
              }),
            ),
          ),
        ]);
        for (const answer of [...plain, ...repeated]) {
          expect([200, 402], JSON.stringify(answer.body)).toContain(answer.status);
          if (answer.status === 402) expect(answer.body.message).toBe('insufficient_balance');
        }
        const repeatedIds = new Set(
          repeated.filter((answer) => answer.status === 200).map((answer) => answer.body.data!.client_id),
        );
        // One order for the key, whichever process answered each request.
        expect(repeatedIds.size).toBeLessThanOrEqual(1);
        const ids = [
          ...new Set(
            [...plain, ...repeated]
              .filter((answer) => answer.status === 200)
              .map((answer) => answer.body.data!.client_id as string),
          ),
        ];
        // The credit covers AFFORDABLE orders; refunds of refused stamps may pay for one more.
        expect(ids.length).toBeGreaterThanOrEqual(AFFORDABLE);
        await until(
          async () =>
            (
              await sql(
                `select 1 from stamp_instances where order_id in (${ids.map(() => '?').join(', ')}) and status = 'pending' limit 1`,
                ids,
              )
            ).length === 0,
          'every order procured',
          { timeoutMs: 180_000, pollMs: 200 },
        );
        return ids;
      });

      // Every order reached its final state, and its counts add up (read through the front).
      const response = await fetch(new URL('/graphql', topology.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${buyer.token}` },
        body: JSON.stringify({
          query: `{ stampOrders(page: 1, size: 50) { items { client_id quantity status charged_amount net_charged_amount status_counts { pending available reserved used rejected } } } }`,
        }),
      });
      const orders = ((await response.json()) as any).data.stampOrders.items as any[];
      expect(orders.map((order) => order.client_id).sort()).toEqual([...orderIds].sort());
      let available = 0;
      let rejected = 0;
      for (const order of orders) {
        expect(['completed', 'partially_failed', 'failed']).toContain(order.status);
        expect(order.status_counts.pending).toBe(0);
        expect(states(order.status_counts)).toBe(order.quantity);
        expect(order.status_counts.available + order.status_counts.rejected).toBe(PER_ORDER);
        expect(order.charged_amount).toBe(`${PER_ORDER * 110}.00`);
        expect(order.net_charged_amount).toBe(`${order.status_counts.available * 110}.00`);
        available += order.status_counts.available;
        rejected += order.status_counts.rejected;
      }

      // The ledger: exactly one charge per order, one refund per refused stamp, the balance never below zero.
      const entries = await sql<{ kind: string; amount_paise: string; balance_after_paise: string; reference: string | null }>(
        'select kind, amount_paise, balance_after_paise, reference from wallet_entries where user_id = ? order by created_at, id',
        [buyer.user_id],
      );
      const charges = entries.filter((entry) => entry.kind === 'charge');
      expect(charges.map((entry) => entry.reference).sort()).toEqual([...orderIds].sort());
      expect(charges.every((entry) => BigInt(entry.amount_paise) === -orderPaise)).toBe(true);
      const refunds = entries.filter((entry) => entry.kind === 'refund');
      expect(refunds).toHaveLength(rejected);
      expect(new Set(refunds.map((entry) => entry.reference)).size).toBe(rejected);
      expect(entries.every((entry) => BigInt(entry.balance_after_paise) >= 0n)).toBe(true);
      const [wallet] = await sql<{ balance_paise: string }>('select balance_paise from wallets where user_id = ?', [
        buyer.user_id,
      ]);
      expect(BigInt(wallet!.balance_paise)).toBe(
        orderPaise * BigInt(AFFORDABLE) - orderPaise * BigInt(orderIds.length) + STAMP_PAISE * BigInt(rejected),
      );
      const shown = await rest<{ balance: string }>(front, 'GET', '/wallet', { token: buyer.token });
      expect(shown.body.data!.balance).toBe((Number(wallet!.balance_paise) / 100).toFixed(2));

      // One certificate per issued stamp, no certificate number twice.
      const [instances] = await sql<{ n: number; files: number; numbers: number }>(
        `select count(*)::int as n, count(distinct pdf_file_id)::int as files, count(distinct certificate_number)::int as numbers
         from stamp_instances where user_id = ? and status = 'available'`,
        [buyer.user_id],
      );
      expect(instances).toEqual({ n: available, files: available, numbers: available });

      const cost = report.procurement!;
      per['procurement: stamps issued / refused'] = `${available} / ${rejected}`;
      per['procurement: stamps settled'] = String(available + rejected);
      per['procurement: seconds from the first order to the last stamp settled'] = cost.seconds.toFixed(1);
      per['procurement: blob bytes per certificate'] = String(Math.round(cost.blobBytes / available));
      per['procurement: worker1 / worker2 CPU ms'] = `${cost.cpuMs.worker1} / ${cost.cpuMs.worker2}`;
      per['procurement: worker1 / worker2 transactions'] = `${cost.pools.worker1!.xacts} / ${cost.pools.worker2!.xacts}`;
    }, 300_000);

    it('reservations raced from sessions created at once on every process: each stamp held at most once', async () => {
      const owner = await newUser('reserver');
      await creditWallet(topology.orm!.em.fork(), owner.user_id, STAMP_PAISE * 14n);
      const ordered = await createStampOrder(front, owner.token, { quantity: 14 });
      expect(ordered.status, JSON.stringify(ordered.body)).toBe(200);
      const orderId = ordered.body.data.client_id as string;
      await until(
        async () =>
          (await sql(`select 1 from stamp_instances where order_id = ? and status = 'pending'`, [orderId])).length === 0,
        'the order procured',
        { timeoutMs: 120_000, pollMs: 200 },
      );
      const availableIds = (
        await sql<{ id: string }>(`select id from stamp_instances where order_id = ? and status = 'available' order by serial`, [
          orderId,
        ])
      ).map((row) => row.id);
      expect(availableIds.length).toBeGreaterThanOrEqual(4);
      const file = await uploadPdf(front, owner.token);

      // The explicit flow: six sessions at once name the same two stamps; one gets them.
      const [x, y] = availableIds;
      const explicit = await Promise.all(
        Array.from({ length: 6 }, () =>
          initializeEsign(front, owner.token, sessionBody(file, { stamp: { stamp_instance_ids: [x, y] } })),
        ),
      );
      expect(explicit.filter((answer) => answer.status === 200)).toHaveLength(1);
      expect(explicit.filter((answer) => answer.status === 422)).toHaveLength(5);

      // The amount flow: twelve sessions at once each want 200 rupees of stamps (two of 100) from the rest.
      const rest200 = availableIds.length - 2;
      const byAmount = await Promise.all(
        Array.from({ length: 12 }, () =>
          initializeEsign(
            front,
            owner.token,
            sessionBody(file, { stamp: { amount: '200', state_code: 'MH', article_id: 'MH-5' } }),
          ),
        ),
      );
      const won = byAmount.filter((answer) => answer.status === 200);
      expect(won).toHaveLength(Math.min(12, Math.floor(rest200 / 2)));
      expect(
        byAmount
          .filter((answer) => answer.status !== 200)
          .every((answer) => answer.status === 422 && answer.body.message === 'stamp_combination_not_found'),
      ).toBe(true);

      const sessions = [...explicit, ...won]
        .filter((answer) => answer.status === 200)
        .map((answer) => answer.body.data!.client_id);
      const held = await sql<{ id: string; status: string; session_id: string | null }>(
        `select id, status, session_id from stamp_instances where order_id = ? and status in ('available', 'reserved')`,
        [orderId],
      );
      const perSession = new Map<string, string[]>();
      for (const row of held.filter((row) => row.status === 'reserved'))
        perSession.set(row.session_id!, [...(perSession.get(row.session_id!) ?? []), row.id]);
      expect([...perSession.keys()].sort()).toEqual([...sessions].sort());
      expect([...perSession.values()].every((ids) => ids.length === 2)).toBe(true);
      expect(perSession.get(explicit.find((answer) => answer.status === 200)!.body.data!.client_id)!.sort()).toEqual(
        [x, y].sort(),
      );
      // The history: no stamp was ever reserved twice; refused sessions left nothing behind.
      const reservations = await sql<{ instance_id: string; n: number }>(
        `select instance_id, count(*)::int as n from stamp_instance_events e join stamp_instances i on i.id = e.instance_id
        where i.order_id = ? and e.to_status = 'reserved' group by instance_id`,
        [orderId],
      );
      expect(reservations.every((row) => row.n === 1)).toBe(true);
      expect(reservations).toHaveLength(sessions.length * 2);
      expect(await sql('select 1 from esign_sessions where user_id = ?', [owner.user_id])).toHaveLength(sessions.length);
    }, 240_000);

    it('subscriptions: clients on every API process hear every change up to the final state, whichever process raised it', async () => {
      const owner = await newUser('follower');
      const file = await uploadPdf(front, owner.token);
      const session = await createSession(
        front,
        owner.token,
        sessionBody(file, {
          signers: [
            signerInput({ full_name: 'Asha Rao', elements: [signatureAt(0, 72, 640)] }),
            signerInput({ full_name: 'Vikram Singh', email: 'vikram@example.com', elements: [signatureAt(0, 300, 640)] }),
          ],
        }),
      );
      // Procurement is held before it records a certificate (a file row) until every subscriber is live.
      const hold = new pg.Client({ connectionString: topology.directUrl });
      await hold.connect();
      await hold.query('begin');
      await hold.query('lock table files in share mode');
      let held = true;
      const release = async () => {
        if (held) {
          held = false;
          await hold.query('commit');
        }
      };
      try {
        const ordered = await createStampOrder(front, owner.token, { mock: true, quantity: 150 });
        expect(ordered.status).toBe(200);
        const orderId = ordered.body.data.client_id as string;

        type Counts = Record<'pending' | 'available' | 'reserved' | 'used' | 'rejected', number>;
        const orderQuery = `subscription ($id: String!) { stampOrderUpdated(client_id: $id) { client_id status_counts { pending available reserved used rejected } } }`;
        const sessionQuery = `subscription ($id: String!) { esignSessionUpdated(client_id: $id) { client_id status signer_idx signers { status } } }`;
        const sessionState = (data: any) => {
          const view = data.esignSessionUpdated;
          return `${view.status}/${view.signer_idx}/${view.signers.map((signer: any) => signer.status).join(',')}`;
        };
        const followers: {
          servedBy: string[];
          order: { seen: Counts[]; errors: unknown[] };
          session: { seen: string[]; errors: unknown[] };
        }[] = [];
        // One socket after the other, each live (its starting state heard) before the next: round robin puts two on
        // each API process.
        for (let n = 0; n < 6; n++) {
          const { client, servedBy } = socket(owner.token);
          const order = follow<Counts>(client, orderQuery, orderId, (data) => data.stampOrderUpdated.status_counts);
          const watched = follow<string>(client, sessionQuery, session.client_id, sessionState);
          // Listening starts before the starting state is read: once it is heard, the subscription is live.
          await until(() => order.seen.length > 0 && watched.seen.length > 0, 'the starting states', { timeoutMs: 30_000 });
          followers.push({ servedBy, order, session: watched });
        }
        const landed = followers.map((follower) => follower.servedBy[0]);
        expect(new Set(landed).size).toBe(3);
        for (const follower of followers)
          expect(follower.order.seen[0]).toEqual({ pending: 150, available: 0, reserved: 0, used: 0, rejected: 0 });

        // The workers procure and announce; every subscriber on every API process hears the order to its end.
        await release();
        const final = { pending: 0, available: 150, reserved: 0, used: 0, rejected: 0 };
        await until(
          () => followers.every((follower) => JSON.stringify(follower.order.seen.at(-1)) === JSON.stringify(final)),
          'every subscriber to hear the order completed',
          {
            timeoutMs: 120_000,
          },
        );
        for (const follower of followers) {
          const seen = follower.order.seen;
          for (let i = 1; i < seen.length; i++) expect(seen[i]!.available).toBeGreaterThan(seen[i - 1]!.available);
          expect(follower.order.errors).toEqual([]);
        }

        // Each signature is raised by whichever API process takes it; every subscriber hears it before the next.
        const raisedBy: string[] = [];
        const expected = [followers[0]!.session.seen[0]!];
        for (const signer of session.signers) {
          const signed = await sign(signer.token);
          expect(signed.status, JSON.stringify(signed.body)).toBe(200);
          raisedBy.push(signed.servedBy);
          const details = await rest<SessionJson>(front, 'GET', '/esign/details', {
            token: owner.token,
            query: { client_id: session.client_id },
          });
          const now = `${details.body.data!.status}/${details.body.data!.signer_idx}/${details.body.data!.signers.map((s) => s.status).join(',')}`;
          expected.push(now);
          await until(
            () => followers.every((follower) => follower.session.seen.at(-1) === now),
            `every subscriber to hear ${now}`,
            {
              timeoutMs: 60_000,
            },
          );
        }
        expect(expected.at(-1)).toBe('completed/2/completed,completed');
        for (const follower of followers) {
          expect(follower.session.seen).toEqual(expected);
          expect(follower.session.errors).toEqual([]);
        }
        // Four of the six heard each signature from another process than their own.
        for (const raiser of raisedBy) expect(landed.filter((process) => process !== raiser)).toHaveLength(4);
        per['subscriptions: sockets per API process'] = ['api1', 'api2', 'api3']
          .map((name) => landed.filter((at) => at === name).length)
          .join(' / ');
        per['subscriptions: order updates heard per subscriber'] = followers
          .map((follower) => follower.order.seen.length)
          .join(', ');
      } finally {
        await release();
        await hold.end();
      }
    }, 240_000);

    it('webhooks: every event delivered, signed with its endpoint secret, once per attempt, in order per resource', async () => {
      const ours = endpoints;
      const events = async () =>
        sql<{ id: string }>(
          `select distinct e.id from webhook_events e join webhook_deliveries d on d.event_id = e.id where d.endpoint_id in (${ours.map(() => '?').join(', ')})`,
          ours,
        );
      await until(
        async () => {
          const [open] = await sql<{ n: number }>(
            `select count(*)::int as n from webhook_deliveries where endpoint_id in (${ours.map(() => '?').join(', ')}) and status <> 'succeeded'`,
            ours,
          );
          const received = new Set(receiver.received.map((request) => request.json.id));
          return open!.n === 0 && (await events()).every((event) => received.has(event.id));
        },
        'every delivery to succeed',
        { timeoutMs: 180_000, pollMs: 250 },
      );
      const eventIds = (await events()).map((event) => event.id);
      const deliveries = await sql<{
        id: string;
        endpoint_id: string;
        event_id: string;
        resource_id: string;
        attempt_count: number;
        seq: string;
      }>(
        `select id, endpoint_id, event_id, resource_id, attempts as attempt_count, seq from webhook_deliveries where endpoint_id in (${ours.map(() => '?').join(', ')})`,
        ours,
      );
      const byId = new Map(deliveries.map((delivery) => [delivery.id, delivery]));
      const received = receiver.received.filter((request) => byId.has(String(request.headers['esign-delivery-id'])));
      expect(new Set(received.map((request) => request.json.id))).toEqual(new Set(eventIds));
      const attempts = new Map<string, number[]>();
      for (const request of received) {
        const delivery = byId.get(String(request.headers['esign-delivery-id']))!;
        expect(request.json.id).toBe(delivery.event_id);
        expect(request.headers['esign-event-id']).toBe(delivery.event_id);
        const checked = verifySignature(request.headers['esign-signature'] as string, request.body, [...secrets.values()]);
        expect(checked.matched).toEqual([secrets.get(delivery.endpoint_id)]);
        attempts.set(delivery.id, [...(attempts.get(delivery.id) ?? []), Number(request.headers['esign-delivery-attempt'])]);
      }
      // Each attempt went out once: the receiver got exactly the attempts the log counts, numbered 1, 2, ...
      for (const delivery of deliveries) {
        const made = attempts.get(delivery.id) ?? [];
        expect(
          made.sort((a, b) => a - b),
          delivery.id,
        ).toEqual(Array.from({ length: delivery.attempt_count }, (_, i) => i + 1));
      }
      // Events of one resource reached its endpoint in the order they happened.
      const firstArrival = new Map<string, number>();
      received.forEach((request, index) => {
        const id = String(request.headers['esign-delivery-id']);
        if (!firstArrival.has(id)) firstArrival.set(id, index);
      });
      const lanes = new Map<string, { seq: bigint; arrived: number }[]>();
      for (const delivery of deliveries) {
        const lane = `${delivery.endpoint_id}/${delivery.resource_id}`;
        lanes.set(lane, [...(lanes.get(lane) ?? []), { seq: BigInt(delivery.seq), arrived: firstArrival.get(delivery.id)! }]);
      }
      for (const [lane, items] of lanes) {
        const bySeq = [...items].sort((a, b) => (a.seq < b.seq ? -1 : 1)).map((item) => item.arrived);
        expect(bySeq, lane).toEqual([...bySeq].sort((a, b) => a - b));
      }
      per['webhooks: events / deliveries needing a retry'] =
        `${eventIds.length} / ${deliveries.filter((delivery) => delivery.attempt_count > 1).length}`;
    }, 240_000);

    it('rate limits: a burst spread over the three processes is refused after the quota in total, not three times it', async () => {
      const user = await createUser(topology.orm!.em.fork(), { email: `burst-${randomBytes(4).toString('hex')}@example.com` });
      const shared = async (tokenId: string) =>
        sql<{ window_start: string; hits: number }>('select window_start, hits from rate_limit_counters where key = ?', [
          `token:${tokenId}`,
        ]);

      /** The limiter's windows are whole minutes of the clock every process shares (this machine's). */
      const minute = () => Math.floor(Date.now() / 60_000);

      /**
       * One request at a time through the front; after each counted one, until its process has added it to the shared
       * count. A process decides from the shared count it read at its own last flush plus its own requests since; the
       * model below predicts each answer from that, given which process took the request. A burst that reaches the
       * next minute (a new window, and the old window's unflushed requests dropped: they no longer decide anything)
       * stops and says so.
       */
      async function burst(token: string, tokenId: string) {
        const started = minute();
        const known = new Map<string, number>();
        const answers: { status: number; servedBy: string; predicted: number }[] = [];
        let counted = 0;
        const flushed = async () => (await shared(tokenId)).reduce((sum, row) => sum + row.hits, 0) >= counted;
        for (let n = 0; n < RATE_LIMIT + 6 && minute() === started; n++) {
          const response = await fetch(new URL('/api/v1/wallet', topology.url), {
            headers: { authorization: `Bearer ${token}` },
          });
          await response.arrayBuffer();
          const servedBy = response.headers.get('x-served-by')!;
          answers.push({ status: response.status, servedBy, predicted: (known.get(servedBy) ?? 0) < RATE_LIMIT ? 200 : 429 });
          if (response.status === 200) {
            counted++;
            await until(async () => minute() !== started || (await flushed()), 'the flush of the shared count', { pollMs: 20 });
            known.set(servedBy, counted);
          }
        }
        const straddled = minute() !== started || (await shared(tokenId)).length > 1;
        return { answers, straddled, counted };
      }

      const run = await measured('rateLimitBurst', async () => {
        let token = user;
        for (let attempt = 0; ; attempt++) {
          const result = await burst(token.token, token.token_id);
          // A burst that straddled a minute's boundary met two windows; it is run again with a fresh token.
          if (!result.straddled || attempt === 2) return result;
          const issued = await issueAccessToken(topology.orm!.em.fork(), user.user_id, { label: 'burst again' });
          token = { user_id: user.user_id, token: issued.token, token_id: issued.token_id };
        }
      });
      expect(run.straddled).toBe(false);
      expect(new Set(run.answers.map((answer) => answer.servedBy))).toEqual(new Set(['api1', 'api2', 'api3']));
      // Each answer is what one shared count predicts...
      expect(run.answers.map((answer) => answer.status)).toEqual(run.answers.map((answer) => answer.predicted));
      // ... which lets through the quota, plus at most one request per other process that had not yet seen it spent.
      expect(run.counted).toBeGreaterThanOrEqual(RATE_LIMIT);
      expect(run.counted).toBeLessThanOrEqual(RATE_LIMIT + 2);
      expect(run.answers.slice(-3).every((answer) => answer.status === 429)).toBe(true);
      per['rate limits: requests let through of a 30 quota, 3 processes'] = String(run.counted);
    }, 120_000);

    it('measures what docs/scaling.md quotes: statements, transactions, CPU and bytes per operation, idle subtracted (printed)', async () => {
      // Idle first: nothing asked of the service, every delivery done; the window ends once the workers' polling has
      // made 300 statements (a condition, not a span of time).
      const quiet = await usage();
      const polled = (pools: Map<string, PoolStats>) =>
        topology.workers.reduce((sum, proc) => sum + (pools.get(proc.alias)?.queries ?? 0), 0);
      await until(async () => polled(await topology.poolStats()) - polled(quiet.pools) >= 300, "the workers' idle polling", {
        timeoutMs: 60_000,
        pollMs: 100,
      });
      report.idle = delta(quiet, await usage());
      const owner = await newUser('measure');
      const file = await uploadPdf(front, owner.token);
      const session = await createSession(front, owner.token, sessionBody(file));
      const READS = 15;
      await measured('detailsReads', async () => {
        for (let n = 0; n < READS; n++) {
          const read = await rest(front, 'GET', '/esign/details', {
            token: owner.token,
            query: { client_id: session.client_id },
          });
          expect(read.status).toBe(200);
        }
      });
      await measured('sessionCreates', async () => {
        for (let n = 0; n < 5; n++) await createSession(front, owner.token, sessionBody(file));
      });
      // One 2-signer document on warm processes (every platform key made by now): each signature alone, and what it
      // stores. The first signature is a signature; the second also completes the document (B-LTA, the certificate).
      const [mark] = await sql<{ at: string }>('select clock_timestamp()::text as at');
      const warm = await createSession(
        front,
        owner.token,
        sessionBody(file, {
          signers: [
            signerInput({ full_name: 'Asha Rao', elements: [signatureAt(0, 72, 640)] }),
            signerInput({ full_name: 'Vikram Singh', email: 'vikram@example.com', elements: [signatureAt(0, 300, 640)] }),
          ],
        }),
      );
      for (const [n, signer] of warm.signers.entries()) {
        const signed = await measured(n === 0 ? 'warmSignature' : 'warmCompletion', () => sign(signer.token));
        expect(signed.status, JSON.stringify(signed.body)).toBe(200);
      }
      const stored = await sql<{ kind: string; name: string; size_bytes: string }>(
        'select kind, name, size_bytes from files where user_id = ? and created_at >= ?::timestamptz order by seq',
        [owner.user_id, mark!.at],
      );
      const idle = report.idle!;
      const apiIdle = {
        xacts: idle.api.xacts / idle.seconds,
        queries: idle.api.queries / idle.seconds,
        cpu: idle.apiCpuMs / idle.seconds,
      };
      const workerIdle = {
        xacts: idle.worker.xacts / idle.seconds,
        queries: idle.worker.queries / idle.seconds,
        cpu: idle.workerCpuMs / idle.seconds,
      };
      const net = (d: Delta, count: number) =>
        `${((d.api.queries - apiIdle.queries * d.seconds) / count).toFixed(1)} statements, ${((d.api.xacts - apiIdle.xacts * d.seconds) / count).toFixed(1)} transactions, ${((d.apiCpuMs - apiIdle.cpu * d.seconds) / count).toFixed(1)} ms CPU`;
      per['idle: 3 API processes, per second (statements / transactions / CPU ms)'] =
        `${apiIdle.queries.toFixed(1)} / ${apiIdle.xacts.toFixed(1)} / ${apiIdle.cpu.toFixed(1)}`;
      per['idle: 2 worker processes, per second (statements / transactions / CPU ms)'] =
        `${workerIdle.queries.toFixed(1)} / ${workerIdle.xacts.toFixed(1)} / ${workerIdle.cpu.toFixed(1)}`;
      per['API, GET esign/details, per read, idle subtracted'] = net(report.detailsReads!, READS);
      per['API, initialize-esign (1 signer), per session, idle subtracted'] = net(report.sessionCreates!, 5);
      const procurement = report.procurement!;
      const stamps = Number(per['procurement: stamps settled'] ?? 0);
      if (stamps > 0) {
        per['procurement: per stamp settled, both workers, idle subtracted'] =
          `${((procurement.worker.queries - workerIdle.queries * procurement.seconds) / stamps).toFixed(1)} statements, ${((procurement.worker.xacts - workerIdle.xacts * procurement.seconds) / stamps).toFixed(1)} transactions, ${((procurement.workerCpuMs - workerIdle.cpu * procurement.seconds) / stamps).toFixed(1)} ms CPU`;
        for (const proc of topology.workers) {
          const share = procurement.pools[proc.name]!;
          per[`procurement: ${proc.name} transactions beyond its idle polling`] = (
            share.xacts -
            (idle.pools[proc.name]!.xacts / idle.seconds) * procurement.seconds
          ).toFixed(0);
        }
      }
      per['signing, warm: the first signature (of 2), API processes, idle subtracted'] = net(report.warmSignature!, 1);
      per['signing, warm: the last signature with completion (B-LTA, certificate), API processes, idle subtracted'] = net(
        report.warmCompletion!,
        1,
      );
      per['signing, warm: files stored by the two signatures (kind name bytes)'] = stored
        .map((file) => `${file.kind} ${file.name} ${file.size_bytes}`)
        .join('; ');
      per['signing, warm: blob bytes added by the two signatures'] = String(
        report.warmSignature!.blobBytes + report.warmCompletion!.blobBytes,
      );
      const shape = await topology.poolShape();
      per['PgBouncer: per process, client connections open / server connections open / ms clients waited for one, all run'] =
        topology.processes
          .map((proc) => {
            const pool = shape.get(proc.alias);
            return `${proc.name} ${pool?.clients ?? 0}/${pool?.servers ?? 0}/${Math.round(pool?.waitedMs ?? 0)}`;
          })
          .join(', ');
      const signing = report.signing;
      if (signing) {
        // The whole signing part (an upload, 4 sessions made, 8 signatures of which 1 Aadhaar through the sandbox ESP,
        // 4 completions to B-LTA, the TSA and OCSP answers the API processes serve themselves), per signature.
        per['signing: the whole part per signature, API processes, idle subtracted'] = net(signing, 8);
        per['signing: worker CPU ms during it (notifications, webhooks)'] = String(signing.workerCpuMs);
      }
      console.info(
        [
          'measured (test/scale/scaled-out.test.ts):',
          ...Object.entries(per).map(([what, value]) => `  ${what}: ${value}`),
          `  raw: ${JSON.stringify(report)}`,
        ].join('\n'),
      );
    }, 120_000);
  },
);
