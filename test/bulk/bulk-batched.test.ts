import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { signatureAt, uploadPdf } from '../helpers/factories';
import { until } from '../helpers/until';
import { WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * A bulk writes the rows of a chunk together (one statement per table), yet each row's session is the one
 * initialize-from-template makes of the same input: the same details, the same audit row, its own expiry job and
 * invite, and its own `esign.session.created` webhook, delivered to a real receiver. Bad rows among them fail alone.
 */
describe('bulk rows written together', () => {
  let app: TestApp;
  let owner: TestUser;
  let templateId: string;
  let field: string;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', BULK_INVITES_PER_SECOND: '1000' } });
    owner = await app.createUser();
    const fileId = await uploadPdf(app, owner.token);
    const saved = await rest<any>(app, 'POST', '/templates/save', {
      token: owner.token,
      json: {
        name: 'Loan agreement',
        file_id: fileId,
        signers: [
          {
            reason: 'Borrower',
            elements: [signatureAt(0), { x: 72, y: 40, page: 0, alignment: 'left', type: 'text', label: 'Loan number' }],
          },
          { reason: 'Lender', elements: [signatureAt(1)] },
        ],
      },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    templateId = saved.body.data.client_id;
    field = saved.body.data.signers[0].elements.find((element: any) => element.type === 'text').field_id;
    const endpoint = await rest<any>(app, 'POST', '/webhooks/create', {
      token: owner.token,
      json: { url: receiver.url, events: ['esign.session.created'] },
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
  });
  afterAll(async () => {
    await app?.close();
    await receiver.stop();
  });

  const lender = { full_name: 'Lender Bank', email: 'loans@example.com' };
  const borrower = (index: number) => ({ full_name: `Borrower ${index}`, email: `borrower${index}@example.com` });
  const options = { sign_type: 'suresign', folder: 'loans', expiry_seconds: 86_400 };
  const notification = { invite: true };
  const sql = <T>(text: string, params: unknown[]) => app.services.orm.em.fork().getConnection().execute<T[]>(text, params);
  const read = async (path: string, clientId: string) =>
    (await rest<any>(app, 'GET', path, { token: owner.token, query: { client_id: clientId } })).body.data;
  /** What two sessions made of the same input may differ in: ids, tokens, times. */
  const comparable = (value: unknown): unknown =>
    JSON.parse(
      JSON.stringify(value, (key, field) =>
        /(^|_)(id|at|url|token)$|^(client_id|created_at|expires_at|signer_id|invite_url)$/.test(key) ? '*' : field,
      ),
    );

  it('each row is the session initialize-from-template makes, with its audit row, expiry job, invite and webhook', async () => {
    // 70 rows: three chunks, with bad rows in two of them.
    const rows = Array.from({ length: 70 }, (_, index) => ({
      key: `loan-${index}`,
      signers: index === 30 ? [borrower(index)] : [index === 55 ? { full_name: 'No contact' } : borrower(index), lender],
      element_values: { [field]: `L-${index}` },
    }));
    const sent = await rest<any>(app, 'POST', '/esign/bulk-send', {
      token: owner.token,
      json: { template_id: templateId, ...options, notification, rows },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const bulkId = sent.body.data.client_id;
    await until(async () => (await read('/esign/bulk-status', bulkId)).status === 'completed', 'the bulk', {
      timeoutMs: 120_000,
    });
    const made = (
      await rest<any>(app, 'GET', '/esign/bulk-rows', { token: owner.token, query: { client_id: bulkId, size: 100 } })
    ).body.data.items;
    expect(made.filter((row: any) => row.status === 'failed').map((row: any) => [row.position, row.error.code])).toEqual([
      [30, 'signer_count_mismatch'],
      [55, 'bad_request'],
    ]);
    const created = made.filter((row: any) => row.status === 'created');
    expect(created).toHaveLength(68);
    const sessionIds = created.map((row: any) => row.session_id);
    expect(new Set(sessionIds).size).toBe(68);

    // Row 7 and initialize-from-template with the same input: the same session, the same audit trail.
    const alone = await rest<any>(app, 'POST', '/esign/initialize-from-template', {
      token: owner.token,
      json: {
        template_id: templateId,
        ...options,
        signers: [
          { ...borrower(7), element_values: { [field]: 'L-7' }, notification },
          { ...lender, notification },
        ],
      },
    });
    expect(alone.status, JSON.stringify(alone.body)).toBe(200);
    const row7 = created.find((row: any) => row.position === 7).session_id;
    expect(comparable(await read('/esign/details', row7))).toEqual(
      comparable(await read('/esign/details', alone.body.data.client_id)),
    );
    // (Only the creation: each invite's `invite_sent` follows whenever its delivery job runs.)
    const creation = async (clientId: string) =>
      comparable((await read('/esign/audit', clientId)).events.filter((event: any) => event.event === 'session_created'));
    expect(await creation(row7)).toEqual(await creation(alone.body.data.client_id));
    expect(await creation(row7)).toHaveLength(1);
    // Every row's own values and contacts.
    for (const row of created.filter((_: unknown, index: number) => index % 9 === 0)) {
      const session = await read('/esign/details', row.session_id);
      expect(session.signers.map((signer: any) => signer.full_name)).toEqual([`Borrower ${row.position}`, 'Lender Bank']);
      expect(session.signers[0].elements.find((element: any) => element.field_id === field).value).toBe(`L-${row.position}`);
    }

    // One expiry job, one audit row and one invite (the first signer's, sequential) per session.
    const perSession = async (text: string) =>
      new Map((await sql<{ id: string; count: string }>(text, [sessionIds])).map((row) => [row.id, Number(row.count)]));
    const jobs = await perSession(
      `select data->>'client_id' as id, count(*) from pgboss.job where name = 'esign.expire' and data->>'client_id' in (?) group by 1`,
    );
    const audits = await perSession(
      `select session_id as id, count(*) from esign_audit_events where event = 'session_created' and session_id in (?) group by 1`,
    );
    const invites = await perSession(
      `select session_id as id, count(*) from notifications where kind = 'invite' and session_id in (?) group by 1`,
    );
    for (const counts of [jobs, audits, invites])
      expect(sessionIds.map((id: string) => counts.get(id))).toEqual(sessionIds.map(() => 1));

    // Every session's own `esign.session.created`, each delivered once, carrying that session.
    const delivered = () =>
      receiver.of('esign.session.created').filter((event) => sessionIds.includes(event.json.data.client_id));
    await receiver.waitFor(() => delivered().length >= 68, 'the 68 esign.session.created events', 60_000);
    expect(new Set(delivered().map((event) => event.json.data.client_id)).size).toBe(68);
    expect(delivered().find((event) => event.json.data.client_id === row7)!.json.data.signers[0].full_name).toBe('Borrower 7');
  });
});
