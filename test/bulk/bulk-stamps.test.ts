import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createStampOrder, signatureAt, uploadPdf } from '../helpers/factories';
import { until } from '../helpers/until';

const STOCK = 6;
const ROWS_EACH = 5;

/**
 * Stamps per row: each row of a bulk reserves its own stamps, in its own transaction. Two bulks racing for the same
 * inventory never give one stamp to two rows; the rows that find none fail with stamp_combination_not_found and hold
 * nothing.
 */
describe('bulk send: a stamp per row, two bulks racing for the same stock', () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ env: { STAMP_VENDOR_LATENCY_MS: '0', STAMP_VENDOR_REJECTION_RATE: '0' } });
    owner = await app.createUser();
  });
  afterAll(async () => app.close());

  const sql = <T>(query: string, params: unknown[] = []) =>
    app.services.orm.em.fork().getConnection().execute<T[]>(query, params);

  it('each stamp goes to one row; the rows left without fail and hold nothing', async () => {
    const order = await createStampOrder(app, owner.token, { mock: true, quantity: STOCK });
    expect(order.status, JSON.stringify(order.body)).toBe(200);
    await until(
      async () =>
        (await sql(`select 1 from stamp_instances where order_id = ? and status = 'pending'`, [order.body.data!.client_id]))
          .length === 0,
      'procurement',
      { timeoutMs: 60_000 },
    );
    const template = await rest<any>(app, 'POST', '/templates/save', {
      token: owner.token,
      json: {
        name: 'Rent agreement',
        file_id: await uploadPdf(app, owner.token),
        signers: [{ reason: 'Tenant', elements: [signatureAt(0)] }],
      },
    });
    const send = (prefix: string) =>
      rest<any>(app, 'POST', '/esign/bulk-send', {
        token: owner.token,
        json: {
          template_id: template.body.data.client_id,
          sign_type: 'suresign',
          rows: Array.from({ length: ROWS_EACH }, (_, index) => ({
            key: `${prefix}-${index}`,
            signers: [{ full_name: `Tenant ${prefix}${index}`, email: `${prefix}${index}@example.com` }],
            stamp: { amount: '100', state_code: 'MH', article_id: 'MH-5', mock: true },
          })),
        },
      });
    const [a, b] = await Promise.all([send('a'), send('b')]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const bulks = [a.body.data.client_id, b.body.data.client_id];
    const statusOf = async (id: string) =>
      (await rest<any>(app, 'GET', '/esign/bulk-status', { token: owner.token, query: { client_id: id } })).body.data;
    await until(async () => (await Promise.all(bulks.map(statusOf))).every((bulk) => bulk.status === 'completed'), 'both bulks', {
      timeoutMs: 120_000,
    });

    const counts = await Promise.all(bulks.map(statusOf));
    const created = counts.reduce((sum, bulk) => sum + bulk.rows.created, 0);
    const failed = counts.reduce((sum, bulk) => sum + bulk.rows.failed, 0);
    expect({ created, failed }).toEqual({ created: STOCK, failed: 2 * ROWS_EACH - STOCK });

    const failures = await sql<{ error: any }>(
      `select error from bulk_rows where bulk_id in (?, ?) and status = 'failed'`,
      bulks,
    );
    expect(failures.map((row) => row.error.code)).toEqual(Array(2 * ROWS_EACH - STOCK).fill('stamp_combination_not_found'));

    // One stamp per session made, no stamp twice, none held by a failed row.
    const held = await sql<{ id: string; session_id: string; status: string }>(
      `select id, session_id, status from stamp_instances where order_id = ?`,
      [order.body.data!.client_id],
    );
    expect(held.every((stamp) => stamp.status === 'reserved')).toBe(true);
    const sessions = await sql<{ session_id: string }>(
      `select session_id from bulk_rows where bulk_id in (?, ?) and status = 'created'`,
      bulks,
    );
    expect(new Set(held.map((stamp) => stamp.session_id))).toEqual(new Set(sessions.map((row) => row.session_id)));
  });
});
