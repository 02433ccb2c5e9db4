import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import WebSocket from 'ws';
import { ORDER_PROGRESS_JOB, announceOrderProgress, orderTopic, publishOrderChange } from '../../src/modules/stamps/order-events';
import { procureBatch } from '../../src/modules/stamps/procure-stamps.job';
import { stampRequestOf } from '../../src/modules/stamps/vendors/ask-vendor';
import type { StampOrder } from '../../src/modules/stamps/stamp-order.entity';
import { MockVendor, SimulatedVendor } from '../../src/modules/sandbox/vendors/simulated-vendors';
import type { VendorAnswer } from '../../src/modules/stamps/vendors/vendor';
import { creditWallet } from '../../src/modules/wallet/credit-wallet';
import { startTestApp, statementsDuring, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { ROOT } from '../helpers/process';
import { untilSubscribed } from '../helpers/subscriptions';

const ORDER = {
  state_code: 'KA',
  first_party_name: 'Asha Rao',
  second_party_name: 'Vikram Singh',
  article_id: 'KA-30',
  stamp_duty_amount: 100,
  consideration_amount: 120000,
  description: 'Lease of flat 4B',
  first_party_address: '12 MG Road, Bengaluru',
};

interface Counts {
  pending: number;
  available: number;
  reserved: number;
  used: number;
  rejected: number;
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function startWorker(
  app: TestApp,
  dataDir: string,
  env: Record<string, string>,
): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/worker.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: app.databaseUrl,
      // The worker writes certificates where the API process reads them.
      STORAGE_DIR: app.services.config.storage.driver === 'local' ? app.services.config.storage.dir : '',
      DATA_DIR: dataDir,
      QUEUE_POLL_INTERVAL_SECONDS: '0.5',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: 'ignore',
  });
  return { child, exited: new Promise((resolve) => child.on('exit', resolve)) };
}

describe('procurement', () => {
  let app: TestApp;
  let dataDir: string;

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  const counts = async (orderId: string): Promise<Counts> => {
    const rows = await sql<{ status: keyof Counts; n: number }>(
      'select status, count(*)::int as n from stamp_instances where order_id = ? group by status',
      [orderId],
    );
    const result: Counts = { pending: 0, available: 0, reserved: 0, used: 0, rejected: 0 };
    for (const row of rows) result[row.status] = row.n;
    return result;
  };
  const balance = async (userId: string) =>
    BigInt(
      (await sql<{ balance_paise: string }>('select balance_paise from wallets where user_id = ?', [userId]))[0].balance_paise,
    );

  async function order(user: TestUser, body: Record<string, unknown>): Promise<string> {
    const response = await rest<{ client_id: string }>(app, 'POST', '/stamps/create-order', {
      token: user.token,
      json: { ...ORDER, ...body },
    });
    expect(response.status).toBe(200);
    return response.body.data!.client_id;
  }

  /** Once the order is procured: each stamp's serial, number, code and where its certificate PDF is stored. */
  async function procuredCertificates(orderId: string) {
    await until(
      () => counts(orderId),
      (c) => c.pending === 0,
      'procurement',
    );
    return sql<{ serial: number; certificate_number: string; verification_code: string; storage_key: string }>(
      `select i.serial, i.certificate_number, i.verification_code, f.storage_key
         from stamp_instances i join files f on f.id = i.pdf_file_id where i.order_id = ? order by i.serial`,
      [orderId],
    );
  }

  /** Every instance that was procured has exactly one certificate file; rejected ones have none and were refunded once. */
  async function expectSettledExactly(orderId: string, user: TestUser, quantity: number, startBalance: bigint) {
    const final = await counts(orderId);
    expect(final.pending).toBe(0);
    expect(final.available + final.rejected).toBe(quantity);
    const instances = await sql<{ n: number; files: number; distinct_files: number; certificates: number }>(
      `select count(*)::int as n, count(pdf_file_id)::int as files, count(distinct pdf_file_id)::int as distinct_files,
              count(distinct certificate_number)::int as certificates
         from stamp_instances where order_id = ?`,
      [orderId],
    );
    expect(instances[0]).toEqual({
      n: quantity,
      files: final.available,
      distinct_files: final.available,
      certificates: final.available,
    });
    const certificateFiles = await sql<{ n: number }>(
      `select count(*)::int as n from files f join stamp_instances i on i.pdf_file_id = f.id where i.order_id = ?`,
      [orderId],
    );
    expect(certificateFiles[0].n).toBe(final.available);
    const refunds = await sql<{ reference: string }>(
      `select reference from wallet_entries where kind = 'refund' and reference in (select id from stamp_instances where order_id = ?)`,
      [orderId],
    );
    expect(refunds).toHaveLength(final.rejected);
    expect(new Set(refunds.map((row) => row.reference)).size).toBe(final.rejected);
    expect(await balance(user.user_id)).toBe(startBalance - BigInt(final.available) * (10_000n + 1_000n));
  }

  describe('in the API process', () => {
    beforeAll(async () => {
      app = await startTestApp({ env: { STAMP_VENDOR_LATENCY_MS: '0', STAMP_PROCURE_BATCH: '50' } });
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'esign-procure-'));
    });
    afterAll(async () => {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('moves every instance of a mock order to available, each with its own certificate', async () => {
      const user = await app.createUser();
      const clientId = await order(user, { mock: true, quantity: 120 });
      const final = await until(
        () => counts(clientId),
        (c) => c.pending === 0,
        'procurement',
      );
      expect(final).toEqual({ pending: 0, available: 120, reserved: 0, used: 0, rejected: 0 });
      const certificates = await sql<{ certificate_number: string; verification_code: string }>(
        'select certificate_number, verification_code from stamp_instances where order_id = ?',
        [clientId],
      );
      expect(
        certificates.every(
          (row) => /^MOCK-KA\d{22}$/.test(row.certificate_number) && /^[A-Z2-9]{12}$/.test(row.verification_code),
        ),
      ).toBe(true);
      expect(new Set(certificates.map((row) => row.certificate_number)).size).toBe(120);
    });

    it("prints each certificate from the order's prepared page: a valid PDF with its own number, code and the order's facts", async () => {
      const user = await app.createUser();
      const clientId = await order(user, { mock: true, quantity: 3 });
      const rows = await procuredCertificates(clientId);
      expect(rows).toHaveLength(3);
      const texts = new Set<string>();
      for (const row of rows) {
        const pdf = await app.services.blobs.getBytes(row.storage_key);
        const file = path.join(dataDir, `${row.certificate_number}.pdf`);
        await writeFile(file, pdf);
        // qpdf (not ours) finds the file sound; pdftotext reads what a person sees on the page.
        expect(execFileSync('qpdf', ['--check', file], { encoding: 'utf8' })).toContain('No syntax or stream encoding errors');
        const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
        for (const printed of [
          'e-Stamp Certificate',
          'Karnataka (KA)',
          `Certificate No.`,
          row.certificate_number,
          row.verification_code,
          `${clientId}/${row.serial}`,
          user.user_id,
          'Asha Rao',
          'Vikram Singh',
          '12 MG Road, Bengaluru',
          'Lease of flat 4B',
          '120000.00',
          '100.00',
        ]) {
          expect(text, printed).toContain(printed);
        }
        // The watermark is drawn letter by letter on a slant; its letters are on the page.
        expect(text.replace(/\s+/g, '')).toMatch(/M.*O.*C.*K/);
        texts.add(text);
      }
      expect(texts.size).toBe(3);
    });

    it('prints party names in an Indian script in that script’s font, shaped, each stamp with its own values', async () => {
      const user = await app.createUser();
      const parties = { first_party_name: 'आशा राव', second_party_name: 'முருகன் ஆறுமுகம்', first_party_address: 'पट्टा 12, बेंगलुरु' };
      const clientId = await order(user, { mock: true, quantity: 2, ...parties });
      const rows = await procuredCertificates(clientId);
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        const file = path.join(dataDir, `${row.certificate_number}.pdf`);
        await writeFile(file, await app.services.blobs.getBytes(row.storage_key));
        expect(execFileSync('qpdf', ['--check', file], { encoding: 'utf8' })).toContain('No syntax or stream encoding errors');
        const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
        for (const printed of [
          ...Object.values(parties),
          row.certificate_number,
          row.verification_code,
          `${clientId}/${row.serial}`,
        ]) {
          expect(text, printed).toContain(printed);
        }
        expect(text).not.toContain('???');
        const fonts = execFileSync('pdffonts', [file], { encoding: 'utf8' });
        for (const font of ['NotoSansDevanagari-Regular', 'NotoSansTamil-Regular', 'Helvetica-Bold'])
          expect(fonts).toContain(font);
      }
    });

    it('never yields more or fewer instances when jobs for one order run at the same time or again', async () => {
      const user = await app.createUser();
      await creditWallet(app.services.orm.em.fork(), user.user_id, 5_000_000n);
      const start = await balance(user.user_id);
      const clientId = await order(user, { quantity: 200 });
      const afterCharge = await balance(user.user_id);
      expect(start - afterCharge).toBe(200n * 11_000n);
      // Extra runs racing the queued ones, and again once everything is done.
      await Promise.all([
        procureBatch(app.services, clientId),
        procureBatch(app.services, clientId),
        procureBatch(app.services, clientId),
      ]);
      await until(
        () => counts(clientId),
        (c) => c.pending === 0,
        'procurement',
      );
      expect(await procureBatch(app.services, clientId)).toBe(0);
      await expectSettledExactly(clientId, user, 200, afterCharge + 200n * 11_000n);
    });

    it('batches nested reads: orders -> stamps -> certificate files cost the same statements for 1 order or 10', async () => {
      const user = await app.createUser();
      for (let i = 0; i < 10; i++) {
        const clientId = await order(user, { mock: true, quantity: 5 });
        await until(
          () => counts(clientId),
          (c) => c.pending === 0,
          'procurement',
        );
      }
      const query = `query ($size: Int!) { stampOrders(page: 1, size: $size) { items { client_id status_counts { available }
        stamps { stamp_id certificate_number pdf_file { client_id page_count } order { client_id } } } } }`;
      const statements = async (size: number) => {
        return statementsDuring(app, async () => {
          const response = await fetch(`${app.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
            body: JSON.stringify({ query, variables: { size } }),
          });
          const body = (await response.json()) as any;
          expect(body.errors).toBeUndefined();
          expect(body.data.stampOrders.items).toHaveLength(size);
          expect(
            body.data.stampOrders.items.every(
              (item: any) => item.stamps.length === 5 && item.stamps.every((s: any) => s.pdf_file.page_count === 1),
            ),
          ).toBe(true);
        });
      };
      expect(await statements(10)).toBe(await statements(1));
    });

    it('completes a 5000-stamp order', async () => {
      const user = await app.createUser();
      const clientId = await order(user, { mock: true, quantity: 5000 });
      const final = await until(
        () => counts(clientId),
        (c) => c.pending === 0,
        'a 5000-stamp order',
        240_000,
      );
      expect(final.available).toBe(5000);
    }, 300_000);

    it('pushes status_counts to the owner over graphql-ws as procurement moves', async () => {
      const user = await app.createUser();
      const stranger = await app.createUser();
      // Procurement is held before it records its first stamp (a certificate's file row) until the owner's
      // subscription is proven live, so the test never races the three batches of a fast mock order.
      const hold = new pg.Client({ connectionString: app.databaseUrl });
      await hold.connect();
      await hold.query('begin');
      await hold.query('lock table files in share mode');
      let held = true;
      const release = async () => {
        if (!held) return;
        held = false;
        await hold.query('commit');
      };
      const clientId = await order(user, { mock: true, quantity: 150 });
      const client: Client = createClient({
        url: `${app.url.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${user.token}` },
        retryAttempts: 0,
      });
      const intruder: Client = createClient({
        url: `${app.url.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${stranger.token}` },
        retryAttempts: 0,
      });
      try {
        const seen: Counts[] = [];
        const refused: unknown[] = [];
        const query = `subscription ($id: String!) { stampOrderUpdated(client_id: $id) { client_id status_counts { pending available reserved used rejected } } }`;
        intruder.subscribe(
          { query, variables: { id: clientId } },
          {
            next: (result) => refused.push(...(result.errors ?? [])),
            error: (error) => refused.push(error),
            complete: () => undefined,
          },
        );
        const done = new Promise<void>((resolve, reject) => {
          client.subscribe<{ stampOrderUpdated: { client_id: string; status_counts: Counts } }>(
            { query, variables: { id: clientId } },
            {
              next: (result) => {
                if (result.errors) reject(new Error(JSON.stringify(result.errors)));
                const update = result.data!.stampOrderUpdated;
                expect(update.client_id).toBe(clientId);
                seen.push(update.status_counts);
                if (update.status_counts.available === 150) resolve();
              },
              error: reject,
              complete: () => undefined,
            },
          );
        });
        await until(
          async () => refused.length,
          (n) => n > 0,
          'the intruder to be refused',
          10_000,
        );
        expect(JSON.stringify(refused[0])).toContain('not_found');
        // A change announced on the order's topic while nothing is recorded: the owner hears it, so is subscribed.
        await until(
          async () => {
            await publishOrderChange(app.services, app.services.orm.em.fork(), { id: clientId, userId: user.user_id });
            return seen.length;
          },
          (n) => n > 0,
          'the owner to be subscribed',
          10_000,
        );
        expect(seen[0]).toEqual({ pending: 150, available: 0, reserved: 0, used: 0, rejected: 0 });
        await release();
        await done;
        expect(seen.at(-1)).toEqual({ pending: 0, available: 150, reserved: 0, used: 0, rejected: 0 });
        for (let i = 1; i < seen.length; i++) expect(seen[i].available).toBeGreaterThanOrEqual(seen[i - 1].available);
      } finally {
        await release();
        await hold.end();
        await client.dispose();
        await intruder.dispose();
      }
    });
  });

  describe('with separate worker processes', () => {
    beforeAll(async () => {
      // The API process runs no workers: every instance is procured by a worker process.
      app = await startTestApp({ env: { RUN_WORKERS: 'false' } });
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'esign-procure-workers-'));
    });
    afterAll(async () => {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('survives a worker killed mid-order: another finishes it with exactly quantity instances and exact refunds', async () => {
      const user = await app.createUser();
      await creditWallet(app.services.orm.em.fork(), user.user_id, 5_000_000n);
      const start = await balance(user.user_id);
      const quantity = 300;
      const clientId = await order(user, { quantity });
      const workerEnv = {
        STAMP_VENDOR_LATENCY_MS: '60',
        STAMP_VENDOR_REJECTION_RATE: '0.1',
        STAMP_PROCURE_BATCH: '40',
        STAMP_CLAIM_SECONDS: '2',
      };
      const first = startWorker(app, dataDir, workerEnv);
      await until(
        () => counts(clientId),
        (c) => c.available + c.rejected >= 40,
        'the first worker to make progress',
      );
      first.child.kill('SIGKILL');
      await first.exited;
      const midway = await counts(clientId);
      expect(midway.pending).toBeGreaterThan(0);

      const second = startWorker(app, dataDir, { ...workerEnv, STAMP_VENDOR_LATENCY_MS: '0' });
      try {
        // Leases of the killed worker run out after STAMP_CLAIM_SECONDS; the sweep is not needed for that,
        // the queued jobs pick the instances up again.
        await until(
          () => counts(clientId),
          (c) => c.pending === 0,
          'the second worker to finish the order',
          120_000,
        );
      } finally {
        second.child.kill('SIGTERM');
        expect(await second.exited).toBe(0);
      }
      await expectSettledExactly(clientId, user, quantity, start);
      const read = await rest<any>(app, 'GET', '/stamps/order-status', { token: user.token, query: { client_id: clientId } });
      expect(read.body.data.stamps).toHaveLength(quantity);
      const certificate = await rest<any>(app, 'GET', '/stamps/download-pdf', {
        token: user.token,
        query: { client_id: read.body.data.stamps.find((stamp: any) => stamp.status === 'available').stamp_id },
      });
      const pdf = await fetch(certificate.body.data.url);
      expect(pdf.status).toBe(200);
      expect(
        Buffer.from(await pdf.arrayBuffer())
          .subarray(0, 5)
          .toString(),
      ).toBe('%PDF-');
    }, 180_000);

    it('picks up an order whose jobs were lost, through the sweep', async () => {
      const user = await app.createUser();
      const clientId = await order(user, { mock: true, quantity: 30 });
      // Lose the queued jobs, and age the order past the sweep's grace period.
      await sql(`delete from pgboss.job where name = 'stamps.procure' and data->>'order_id' = ?`, [clientId]);
      await sql(`update stamp_instances set created_at = now() - interval '1 minute' where order_id = ?`, [clientId]);
      const worker = startWorker(app, dataDir, {});
      try {
        await app.services.boss.send('stamps.procure-sweep', {});
        await until(
          () => counts(clientId),
          (c) => c.available === 30,
          'the sweep to recover the order',
        );
      } finally {
        worker.child.kill('SIGTERM');
        await worker.exited;
      }
    });
  });
});

describe('progress reaches subscribers and webhooks as procurement moves, not per batch', () => {
  // No jobs: each batch is run by hand with a vendor the test holds; the vendor is waited for as long as it takes.
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { RUN_WORKERS: 'false', STAMP_VENDOR_TIMEOUT_MS: '600000' } });
  });
  afterAll(async () => app.close());

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  const eventTypes = async (orderId: string) =>
    (await sql<{ type: string }>(`select type from webhook_events where resource_id = ? order by created_at, id`, [orderId])).map(
      (row) => row.type,
    );

  /** An owner with a webhook endpoint for order events, an order of `quantity`, and a live subscription to it. */
  async function watchedOrder(quantity: number) {
    const user = await app.createUser();
    await creditWallet(app.services.orm.em.fork(), user.user_id, 10_000_000n);
    // Nothing is delivered here (no jobs run): the events recorded for delivery are what the test reads.
    const endpoint = await rest(app, 'POST', '/webhooks/create', {
      token: user.token,
      json: { url: 'https://93.184.215.14/hook', events: ['stamp.order.progress', 'stamp.order.completed'] },
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
    const created = await rest<{ client_id: string }>(app, 'POST', '/stamps/create-order', {
      token: user.token,
      json: { ...ORDER, quantity },
    });
    expect(created.status).toBe(200);
    const orderId = created.body.data!.client_id;
    const client: Client = createClient({
      url: `${app.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${user.token}` },
      retryAttempts: 0,
    });
    const seen: Counts[] = [];
    const waiters: { done: (counts: Counts) => boolean; resolve: () => void }[] = [];
    client.subscribe<{ stampOrderUpdated: { status_counts: Counts } }>(
      {
        query: `subscription ($id: String!) { stampOrderUpdated(client_id: $id) { status_counts { pending available reserved used rejected } } }`,
        variables: { id: orderId },
      },
      {
        next: (result) => {
          const counts = result.data!.stampOrderUpdated.status_counts;
          seen.push(counts);
          for (const waiter of waiters) if (waiter.done(counts)) waiter.resolve();
        },
        error: () => undefined,
        complete: () => undefined,
      },
    );
    await untilSubscribed(app, orderTopic(orderId), 0);
    /** Resolves at the first event (already seen or to come) whose counts satisfy `done`. */
    const heard = (done: (counts: Counts) => boolean, what: string) =>
      new Promise<void>((resolve, reject) => {
        if (seen.some(done)) return resolve();
        const timer = setTimeout(() => reject(new Error(`no event with ${what}; heard ${JSON.stringify(seen)}`)), 45_000);
        waiters.push({ done, resolve: () => (clearTimeout(timer), resolve()) });
      });
    return { user, orderId, client, seen, heard };
  }

  it('a batch still waiting on its vendor has already announced the stamps it recorded', async () => {
    const { orderId, client, heard } = await watchedOrder(60);
    // The vendor answers the first 50 asks at once (one recorded chunk) and holds the last 10 until the test lets go.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const issuer = new MockVendor();
    let asks = 0;
    const vendor = {
      name: 'held',
      procure: async (request: Parameters<MockVendor['procure']>[0]): Promise<VendorAnswer> => {
        if (++asks > 50) await held;
        return issuer.procure(request);
      },
    };
    const batch = procureBatch(app.services, orderId, vendor);
    try {
      // Heard while the batch is still running (it cannot end before letGo).
      await heard((c) => c.available === 50 && c.pending === 10, '50 available and 10 pending');
      expect(await eventTypes(orderId)).toContain('stamp.order.progress');
      expect(await eventTypes(orderId)).not.toContain('stamp.order.completed');
    } finally {
      letGo();
    }
    expect(await batch).toBe(60);
    // The final state is always heard, and the completion recorded once.
    await heard((c) => c.available === 60 && c.pending === 0, 'all 60 available');
    expect((await eventTypes(orderId)).filter((type) => type === 'stamp.order.completed')).toHaveLength(1);
    await client.dispose();
  }, 120_000);

  it('a change inside the interval is announced at its end, by a job: the last state is heard', async () => {
    const { user, orderId, client, heard } = await watchedOrder(3);
    // As if progress had just been announced: the next change must wait for the interval's end.
    await sql(`update stamp_orders set progress_announced_at = now() + interval '1 second' where id = ?`, [orderId]);
    const [first] = await sql<{ id: string }>(
      `update stamp_instances set status = 'available' where id = (select id from stamp_instances where order_id = ? order by serial limit 1) returning id`,
      [orderId],
    );
    expect(first.id).toMatch(/^stamp_inst_/);
    await announceOrderProgress(app.services, { id: orderId, userId: user.user_id });
    const [job] = await sql<{ data: { order_id: string }; state: string }>(
      `select data, state from pgboss.job where name = ? and data->>'order_id' = ?`,
      [ORDER_PROGRESS_JOB, orderId],
    );
    expect(job).toMatchObject({ data: { order_id: orderId }, state: 'created' });
    // This app runs no jobs: run the queued one as a worker would, once it is due.
    await until(
      async () => {
        const [due] = await sql<{ id: string }>(
          `select id from pgboss.job where name = ? and data->>'order_id' = ? and start_after <= now()`,
          [ORDER_PROGRESS_JOB, orderId],
        );
        if (due) await announceOrderProgress(app.services, { id: orderId, userId: user.user_id });
        return Boolean(due);
      },
      (due) => due,
      'the held-back announcement to be due',
      30_000,
    );
    await heard((c) => c.available === 1 && c.pending === 2, 'the change made inside the interval');
    expect(await eventTypes(orderId)).toEqual(['stamp.order.progress']);
    await client.dispose();
  }, 120_000);
});

describe('the simulated vendors keep their answers per idempotency key (order id, serial)', () => {
  const order = {
    id: 'stamp_0123456789abcdef0123456789abcdef',
    stateCode: 'MH',
    articleId: 'MH-5',
    dutyPaise: 10_000n,
    considerationPaise: 100_000n,
    firstPartyName: 'Asha Rao',
    secondPartyName: 'Vikram Singh',
    createdAt: new Date('2026-11-24T00:00:00Z'),
  } as StampOrder;
  const signal = new AbortController().signal;

  it('the same key gets the same stamp or the same refusal, another key another stamp', async () => {
    const vendor = new SimulatedVendor({ latencyMs: 0, rejectionRate: 0.5 });
    const ask = () =>
      Promise.all(Array.from({ length: 40 }, (_, serial) => vendor.procure(stampRequestOf(order, serial + 1), signal)));
    const answers = await ask();
    const again = await ask();
    const strip = (answer: VendorAnswer) =>
      answer.kind === 'issued' ? { certificate: answer.stamp.certificateNumber, code: answer.stamp.verificationCode } : answer;
    expect(again.map(strip)).toEqual(answers.map(strip));
    const issued = answers.flatMap((answer) => (answer.kind === 'issued' ? [answer.stamp.certificateNumber] : []));
    expect(issued.length).toBeGreaterThan(5);
    expect(issued.length).toBeLessThan(35);
    expect(new Set(issued).size).toBe(issued.length);
    expect(issued.every((number) => /^IN-MH261124\d{16}$/.test(number))).toBe(true);
    const mock = new MockVendor();
    const [first, second] = [await mock.procure(stampRequestOf(order, 3)), await mock.procure(stampRequestOf(order, 3))];
    expect(first).toMatchObject({ kind: 'issued', stamp: { certificateNumber: expect.stringMatching(/^MOCK-MH/) } });
    expect(
      first.kind === 'issued' && second.kind === 'issued' && first.stamp.certificateNumber === second.stamp.certificateNumber,
    ).toBe(true);
  });

  it('answers pending first and issued once the time has passed, for the same key', async () => {
    const vendor = new SimulatedVendor({ latencyMs: 0, rejectionRate: 0, pendingRate: 1, pendingMs: 300 });
    const request = stampRequestOf(order, 7);
    expect(await vendor.procure(request, signal)).toEqual({ kind: 'pending', retryAfterSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(await vendor.procure(request, signal)).toMatchObject({ kind: 'issued' });
  });
});

describe('the vendor adapter’s branches, through the jobs and the database', () => {
  const sql = async <T = any>(app: TestApp, query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  const statuses = async (app: TestApp, orderId: string) =>
    Object.fromEntries(
      (
        await sql<{ status: string; n: number }>(
          app,
          'select status, count(*)::int as n from stamp_instances where order_id = ? group by status',
          [orderId],
        )
      ).map((row) => [row.status, row.n]),
    );
  async function placeOrder(app: TestApp, user: TestUser, quantity: number): Promise<string> {
    const response = await rest<{ client_id: string }>(app, 'POST', '/stamps/create-order', {
      token: user.token,
      json: { ...ORDER, quantity },
    });
    expect(response.status).toBe(200);
    return response.body.data!.client_id;
  }
  /** The certificate files on disk under the user's folder (what a late worker might leave behind). */
  const filesOnDisk = async (app: TestApp, userId: string) => {
    const storage = app.services.config.storage;
    if (storage.driver !== 'local') throw new Error('the test app stores blobs on local disk');
    return (await readdir(path.join(storage.dir, 'files', userId)).catch(() => [])).filter((name) => !name.endsWith('.partial'));
  };

  it('refusals, pending answers and a vendor that hangs past the timeout: the order still ends exact, refunds once each', async () => {
    const app = await startTestApp({
      env: {
        STAMP_VENDOR_LATENCY_MS: '0',
        STAMP_VENDOR_REJECTION_RATE: '0.25',
        STAMP_VENDOR_PENDING_RATE: '0.25',
        STAMP_VENDOR_HANG_RATE: '0.25',
        STAMP_VENDOR_TIMEOUT_MS: '300',
        STAMP_PROCURE_BATCH: '20',
      },
    });
    try {
      const user = await app.createUser();
      await creditWallet(app.services.orm.em.fork(), user.user_id, 1_000_000n);
      const orderId = await placeOrder(app, user, 40);
      const final = await until(
        () => statuses(app, orderId),
        (counts) => !counts.pending,
        'every instance settled',
        60_000,
      );
      expect((final.available ?? 0) + (final.rejected ?? 0)).toBe(40);
      expect(final.rejected).toBeGreaterThan(0);
      // Some were asked more than once (pending, or no answer in time) and still ended available, once.
      const askedAgain = await sql<{ status: string; n: number }>(
        app,
        `select status, count(*)::int as n from stamp_instances where order_id = ? and vendor_attempts > 0 group by status`,
        [orderId],
      );
      expect(askedAgain.find((row) => row.status === 'available')?.n ?? 0).toBeGreaterThan(0);
      const refunds = await sql<{ reference: string }>(
        app,
        `select reference from wallet_entries where kind = 'refund' and reference in (select id from stamp_instances where order_id = ?)`,
        [orderId],
      );
      expect(refunds).toHaveLength(final.rejected);
      expect(new Set(refunds.map((row) => row.reference)).size).toBe(final.rejected);
      const [{ balance }] = await sql<{ balance: string }>(
        app,
        'select balance_paise as balance from wallets where user_id = ?',
        [user.user_id],
      );
      expect(BigInt(balance)).toBe(1_000_000n - BigInt(final.available) * 11_000n);
      // Each instance went from pending to where it is in one step, whatever the asks.
      const moves = await sql<{ n: number }>(
        app,
        `select count(*)::int as n from stamp_instance_events e join stamp_instances i on i.id = e.instance_id
          where i.order_id = ? and e.from_status = 'pending'`,
        [orderId],
      );
      expect(moves[0].n).toBe(40);
      expect(await filesOnDisk(app, user.user_id)).toHaveLength(final.available);
    } finally {
      await app.close();
    }
  });

  describe('with the jobs stopped (each batch run by hand)', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startTestApp({ env: { RUN_WORKERS: 'false', STAMP_CLAIM_SECONDS: '1', STAMP_VENDOR_TIMEOUT_MS: '10000' } });
    });
    afterAll(async () => app.close());

    it('a late answer after the lease moved: the second worker records it, the first finds it settled and leaves nothing', async () => {
      const user = await app.createUser();
      await creditWallet(app.services.orm.em.fork(), user.user_id, 1_000_000n);
      const orderId = await placeOrder(app, user, 5);
      // One vendor, as one vendor answers both workers: every first ask hangs 6 s, well past the 1 s lease.
      const vendor = new SimulatedVendor({ latencyMs: 0, rejectionRate: 0, hangRate: 1, hangMs: 6000 });
      const slow = procureBatch(app.services, orderId, vendor);
      // The second worker comes once the first one's lease has run out: all five claimed, and every claim past.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const [lapsed] = await sql<{ n: number }>(
          app,
          `select count(*)::int as n from stamp_instances
            where order_id = ? and status = 'pending' and claim_expires_at is not null and claim_expires_at < now()`,
          [orderId],
        );
        if (lapsed.n === 5) break;
        if (Date.now() > deadline) throw new Error(`the first worker's lease did not run out: ${lapsed.n} of 5`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await procureBatch(app.services, orderId, vendor)).toBe(5);
      const recorded = await sql<{ id: string; certificate_number: string; pdf_file_id: string }>(
        app,
        'select id, certificate_number, pdf_file_id from stamp_instances where order_id = ? order by serial',
        [orderId],
      );
      expect(recorded.every((row) => row.certificate_number && row.pdf_file_id)).toBe(true);
      expect(await slow).toBe(5);
      // The late worker's answers were the same stamps; what it stored for them is gone again.
      const after = await sql<{ id: string; certificate_number: string; pdf_file_id: string }>(
        app,
        'select id, certificate_number, pdf_file_id from stamp_instances where order_id = ? order by serial',
        [orderId],
      );
      expect(after).toEqual(recorded);
      const files = await sql<{ n: number }>(app, `select count(*)::int as n from files where user_id = ?`, [user.user_id]);
      expect(files[0].n).toBe(5);
      expect(await filesOnDisk(app, user.user_id)).toHaveLength(5);
      expect(await statuses(app, orderId)).toEqual({ available: 5 });
      const history = await sql<{ n: number }>(
        app,
        `select count(*)::int as n from stamp_instance_events e join stamp_instances i on i.id = e.instance_id where i.order_id = ?`,
        [orderId],
      );
      expect(history[0].n).toBe(10);
    });

    it('a vendor answering two keys with one certificate number: the later ones are refused and refunded', async () => {
      const user = await app.createUser();
      await creditWallet(app.services.orm.em.fork(), user.user_id, 1_000_000n);
      const orderId = await placeOrder(app, user, 6);
      const vendor = new SimulatedVendor({ latencyMs: 0, rejectionRate: 0, duplicateRate: 1 });
      expect(await procureBatch(app.services, orderId, vendor)).toBe(6);
      expect(await statuses(app, orderId)).toEqual({ available: 1, rejected: 5 });
      const rejected = await sql<{ rejected_reason: string; pdf_file_id: string | null }>(
        app,
        `select rejected_reason, pdf_file_id from stamp_instances where order_id = ? and status = 'rejected'`,
        [orderId],
      );
      expect(
        rejected.every((row) => /already issued for another stamp/.test(row.rejected_reason) && row.pdf_file_id === null),
      ).toBe(true);
      const refunds = await sql<{ n: number }>(
        app,
        `select count(*)::int as n from wallet_entries where kind = 'refund' and reference in (select id from stamp_instances where order_id = ?)`,
        [orderId],
      );
      expect(refunds[0].n).toBe(5);
      expect(await filesOnDisk(app, user.user_id)).toHaveLength(1);
      // The database holds the rule too.
      const [available] = await sql<{ certificate_number: string }>(
        app,
        `select certificate_number from stamp_instances where order_id = ? and status = 'available'`,
        [orderId],
      );
      const other = await placeOrder(app, user, 1);
      await expect(
        sql(app, `update stamp_instances set certificate_number = ? where order_id = ?`, [available.certificate_number, other]),
      ).rejects.toThrow(/stamp_instances_certificate_number_unique/);
    });

    it('a pending answer leases the instance to nobody until the vendor’s time and schedules the next ask', async () => {
      const user = await app.createUser();
      await creditWallet(app.services.orm.em.fork(), user.user_id, 1_000_000n);
      const orderId = await placeOrder(app, user, 3);
      const vendor = new SimulatedVendor({ latencyMs: 0, rejectionRate: 0, pendingRate: 1, pendingMs: 2000 });
      expect(await procureBatch(app.services, orderId, vendor)).toBe(3);
      const waiting = await sql<{ status: string; vendor_attempts: number; wait: number }>(
        app,
        `select status, vendor_attempts, extract(epoch from claim_expires_at - now())::float as wait
           from stamp_instances where order_id = ?`,
        [orderId],
      );
      expect(waiting.every((row) => row.status === 'pending' && row.vendor_attempts === 1 && row.wait > 0.5)).toBe(true);
      // Nobody can claim them before then.
      expect(await procureBatch(app.services, orderId, vendor)).toBe(0);
      const scheduled = await sql<{ n: number }>(
        app,
        `select count(*)::int as n from pgboss.job where name = 'stamps.procure' and data->>'order_id' = ? and start_after > now()`,
        [orderId],
      );
      expect(scheduled[0].n).toBeGreaterThan(0);
      await until(
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 250));
          return procureBatch(app.services, orderId, vendor);
        },
        (claimed) => claimed === 3,
        'the instances to be claimable again',
        10_000,
      );
      expect(await statuses(app, orderId)).toEqual({ available: 3 });
    });
  });
});
