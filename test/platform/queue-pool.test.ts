import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueuePool } from '../../src/platform/jobs/queue-pool';
import { startTestApp, type TestApp } from '../helpers/app';

/**
 * The queue's pool (platform/jobs/queue-pool.ts) closes without hanging: queries waiting for a connection when it
 * closes are still answered (pg-pool's own end() would leave them waiting for ever, and a pg-boss worker with them),
 * then the pool ends; a query asked after that is never answered and never rejects (pg-boss does not await a job's
 * completion), and holds nothing open.
 */
describe('the queue’s pool', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app.close());

  it('answers every query asked before it closes, however many waited for a connection, then ends', async () => {
    const pool = new QueuePool(app.databaseUrl, { max: 1, applicationName: 'queue-pool-test', onError: () => undefined });
    // One connection: the first holds it a while, the others wait in pg-pool's queue.
    const asked = [
      pool.executeSql('select pg_sleep(0.2), 0 as n'),
      ...[1, 2, 3, 4, 5].map((n) => pool.executeSql('select $1::int as n', [n])),
    ];
    const closed = pool.close();
    const answers = await Promise.all(asked);
    expect(answers.map((answer) => Number(answer.rows[0].n))).toEqual([0, 1, 2, 3, 4, 5]);
    await closed;
    // The pool's connection leaves the server (its backend exits just after the socket closes: waited for).
    const connections = async () =>
      (
        await app.services.orm.em
          .fork()
          .getConnection()
          .execute<{ count: string }[]>(
            `select count(*)::text as count from pg_stat_activity where application_name = 'queue-pool-test'`,
          )
      )[0]!.count;
    await expect.poll(connections).toBe('0');

    // Asked after: neither answered nor refused (a refusal pg-boss does not catch would be an unhandled rejection).
    let settled = false;
    void pool.executeSql('select 1').then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    await pool.close(); // closing again is a no-op
  });
});
