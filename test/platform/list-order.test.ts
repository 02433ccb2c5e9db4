import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditWallet } from '../../src/modules/wallet/credit-wallet';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { MINIMAL_PDF } from '../helpers/fixtures';

/**
 * Rows made at one instant (one transaction, one millisecond) must still list in one order the user can rely
 * on: newest first by insertion, on every read and across pages. The test makes the tie real by giving the
 * rows one `created_at`, then reads every page several times.
 */
describe('lists have a total order', () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
  });
  afterAll(() => app.close());

  async function tie(table: string, ids: string[]): Promise<void> {
    await app.services.orm.em
      .getConnection()
      .execute(`update ${table} set created_at = '2026-01-01T00:00:00Z' where id in (${ids.map(() => '?').join(', ')})`, ids);
  }

  async function readAllPages(path: string, extra: Record<string, unknown> = {}): Promise<string[]> {
    const seen: string[] = [];
    for (let page = 1; ; page++) {
      const response = await rest<{ items: { client_id?: string; entry_id?: string }[]; has_next: boolean }>(app, 'GET', path, {
        token: owner.token,
        query: { page, size: 2, ...extra },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      seen.push(...response.body.data!.items.map((item) => (item.client_id ?? item.entry_id)!));
      if (!response.body.data!.has_next) return seen;
    }
  }

  it('files/list and esign/list: tied rows come newest first by insertion, the same on every read', async () => {
    const files: string[] = [];
    for (let n = 0; n < 5; n++) files.push(await uploadPdf(app, owner.token, MINIMAL_PDF, `f${n}.pdf`));
    await tie('files', files);
    const sessions: string[] = [];
    for (let n = 0; n < 5; n++) {
      const session = await createSession(app, owner.token, sessionBody(files[n], { signers: [signerInput()] }));
      sessions.push(session.client_id);
    }
    await tie('esign_sessions', sessions);

    for (let read = 0; read < 3; read++) {
      expect(await readAllPages('/files/list', { kind: 'pdf' })).toEqual([...files].reverse());
      expect(await readAllPages('/esign/list')).toEqual([...sessions].reverse());
    }
  });

  it('wallet/ledger: entries of one instant keep their insertion order', async () => {
    const entries: string[] = [];
    for (let n = 1; n <= 5; n++)
      entries.push((await creditWallet(app.services.orm.em.fork(), owner.user_id, BigInt(n * 100))).entry_id);
    await tie('wallet_entries', entries);
    for (let read = 0; read < 3; read++) expect(await readAllPages('/wallet/ledger')).toEqual([...entries].reverse());
  });

  it('the added lists default to page 1 of 20; the contract’s stamps/list still requires page and size', async () => {
    for (let n = 0; n < 21; n++) await uploadPdf(app, owner.token, MINIMAL_PDF, `d${n}.pdf`);
    for (const path of ['/files/list', '/esign/list', '/templates/list', '/wallet/ledger']) {
      const response = await rest<{ items: unknown[]; has_next: boolean }>(app, 'GET', path, { token: owner.token });
      expect(response.status, `${path}: ${JSON.stringify(response.body)}`).toBe(200);
      expect(response.body.data!.items.length).toBeLessThanOrEqual(20);
    }
    const files = await rest<{ items: unknown[]; has_next: boolean }>(app, 'GET', '/files/list', { token: owner.token });
    expect(files.body.data!.items).toHaveLength(20);
    expect(files.body.data!.has_next).toBe(true);

    const stamps = await rest(app, 'GET', '/stamps/list', { token: owner.token });
    expect(stamps.status).toBe(400);
    expect(stamps.body.message).toBe('missing_fields');
    const sized = await rest(app, 'GET', '/stamps/list', { token: owner.token, query: { page: 1 } });
    expect(sized.body.message).toBe('missing_fields');
  });
});
