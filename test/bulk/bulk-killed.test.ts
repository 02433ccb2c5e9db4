/**
 * A worker killed with kill -9 in the middle of a bulk: another worker takes the bulk up again (the minute's sweep,
 * sent here at once), and in the end every row is one session: none made twice, none lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { signatureAt, uploadPdf } from '../helpers/factories';
import { startServiceProcess, WORKER, type ServiceProcess } from '../helpers/process';
import { until } from '../helpers/until';

const ROWS = 400;

describe('bulk send: a worker killed mid-bulk', () => {
  let app: TestApp;
  let owner: TestUser;
  const workers: ServiceProcess[] = [];

  /** A queue worker process (`npm run worker`) on the app's database and files. */
  async function startWorker(): Promise<ServiceProcess> {
    const worker = startServiceProcess(
      {
        DATABASE_URL: app.databaseUrl,
        DATA_DIR: app.services.config.dataDir,
        QUEUE_POLL_INTERVAL_SECONDS: '0.5',
        BULK_STALE_SECONDS: '1',
        LOG_LEVEL: 'info',
      },
      WORKER,
    );
    workers.push(worker);
    await worker.waitForLine(/"msg":"worker running"/);
    return worker;
  }

  beforeAll(async () => {
    // The API takes requests only: bulks are the worker processes' work.
    app = await startTestApp({ env: { RUN_WORKERS: 'false' } });
    owner = await app.createUser();
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await app?.close();
  });

  const sql = <T>(query: string, params: unknown[] = []) =>
    app.services.orm.em.fork().getConnection().execute<T[]>(query, params);

  it('resumes: every row becomes exactly one session', async () => {
    const template = await rest<any>(app, 'POST', '/templates/save', {
      token: owner.token,
      json: {
        name: 'Loan agreement',
        file_id: await uploadPdf(app, owner.token),
        signers: [{ reason: 'Borrower', elements: [signatureAt(0)] }],
      },
    });
    expect(template.status, JSON.stringify(template.body)).toBe(200);
    const sent = await rest<any>(app, 'POST', '/esign/bulk-send', {
      token: owner.token,
      json: {
        template_id: template.body.data.client_id,
        sign_type: 'suresign',
        rows: Array.from({ length: ROWS }, (_, index) => ({
          key: `loan-${index}`,
          signers: [{ full_name: `Borrower ${index}`, email: `b${index}@example.com` }],
        })),
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const bulkId = sent.body.data.client_id as string;
    const created = async () =>
      Number(
        (await sql<{ n: string }>(`select count(*) as n from bulk_rows where bulk_id = ? and status = 'created'`, [bulkId]))[0]!
          .n,
      );

    const first = await startWorker();
    await until(async () => (await created()) >= 50, 'the first rows made', { timeoutMs: 120_000 });
    first.child.kill('SIGKILL');
    await first.exited;
    const atKill = await created();
    expect(atKill).toBeLessThan(ROWS);

    // What the kill left: each made row with its one session, no session without its row.
    const sessionsOf = async () =>
      Number((await sql<{ n: string }>('select count(*) as n from esign_sessions where user_id = ?', [owner.user_id]))[0]!.n);
    expect(await sessionsOf()).toBe(atKill);

    await startWorker();
    // The minute's sweep, at once: the bulk made no row for a second.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await app.services.boss.send('bulk.resume', {});
    await until(
      async () => (await sql<{ status: string }>('select status from bulks where id = ?', [bulkId]))[0]!.status === 'completed',
      'the bulk completed by the second worker',
      { timeoutMs: 180_000 },
    );
    expect(await created()).toBe(ROWS);
    expect(await sessionsOf()).toBe(ROWS);
    const [distinct] = await sql<{ rows: string; sessions: string }>(
      `select count(*) as rows, count(distinct r.session_id) as sessions from bulk_rows r
        join esign_sessions s on s.id = r.session_id where r.bulk_id = ?`,
      [bulkId],
    );
    expect({ rows: Number(distinct!.rows), sessions: Number(distinct!.sessions) }).toEqual({ rows: ROWS, sessions: ROWS });
  });
});
