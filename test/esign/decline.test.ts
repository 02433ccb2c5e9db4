/**
 * Issue 21, decline: a signer says no through the signer API, with a reason. The session ends `declined` (final),
 * its stamps go back to the inventory, the owner is emailed, the audit trail keeps the reason, and subscribers and
 * webhooks hear it. Tested with a real HTTP webhook receiver and a real graphql-ws client.
 */
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { sessionTopic } from '../../src/modules/esign/session-events';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { untilSubscribed } from '../helpers/subscriptions';
import { WebhookReceiver } from '../helpers/webhook-receiver';

describe('a signer declines', () => {
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;
  const receiver = new WebhookReceiver();

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  const signerCall = (method: 'GET' | 'POST', path: string, token: string, json?: unknown) =>
    signerApi(app, method, path, token, json);
  const details = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data;

  beforeAll(async () => {
    await receiver.start();
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', STAMP_VENDOR_LATENCY_MS: '0' } });
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
    const endpoint = await rest(app, 'POST', '/webhooks/create', {
      token: owner.token,
      json: { url: receiver.url, events: ['esign.session.declined'] },
    });
    expect(endpoint.status).toBe(200);
  });
  afterAll(async () => {
    await app?.close();
    await receiver.stop();
  });

  it('the second of two signers declines before their turn: the session ends, stamps return, everyone is told', async () => {
    // A stamp in the session, to see it come back.
    const order = await rest<{ client_id: string }>(app, 'POST', '/stamps/create-order', {
      token: owner.token,
      json: {
        state_code: 'MH',
        article_id: 'MH-5',
        first_party_name: 'Asha Rao',
        second_party_name: 'Vikram Singh',
        stamp_duty_amount: 100,
        consideration_amount: 1000,
        quantity: 1,
        mock: true,
      },
    });
    let stampId = '';
    for (let i = 0; i < 200 && !stampId; i++) {
      const rows = await sql<{ id: string }>(`select id from stamp_instances where order_id = ? and status = 'available'`, [
        order.body.data!.client_id,
      ]);
      stampId = rows[0]?.id ?? '';
      if (!stampId) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        stamp: { stamp_instance_ids: [stampId], mock: true },
        signers: [signerInput({ full_name: 'Asha Rao' }), signerInput({ full_name: 'Vikram Singh' })],
      }),
    );
    const [first, second] = session.signers;

    // Listening as the owner's frontend does.
    const events: any[] = [];
    const listening = app.services.events.subscriberCount(sessionTopic(session.client_id));
    const client = createClient({
      url: app.url.replace(/^http/, 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${owner.token}` },
      lazy: false,
    });
    const failures: unknown[] = [];
    client.subscribe(
      {
        query: `subscription ($id: String!) { esignSessionUpdated(client_id: $id) { status signers { signer_id status decline_reason } } }`,
        variables: { id: session.client_id },
      },
      { next: (value) => events.push(value.data), error: (error) => failures.push(error), complete: () => undefined },
    );
    await untilSubscribed(app, sessionTopic(session.client_id), listening, () => failures.length > 0);
    expect(failures).toEqual([]);

    const reason = 'The rent in clause 4 is not what we agreed.';
    const declined = await signerCall('POST', '/decline', second.token, { reason: `  ${reason}  ` });
    expect(declined.status).toBe(200);
    expect(declined.body.data.signer).toMatchObject({ status: 'declined', decline_reason: reason, eligible: false });
    expect(declined.body.data.session).toMatchObject({ status: 'declined', declined_by: 'Vikram Singh' });

    // The owner's reads.
    const read = await details(session.client_id);
    expect(read.status).toBe('declined');
    expect(read.signers.map((s: any) => [s.status, s.eligible, s.decline_reason])).toEqual([
      ['pending', false, null],
      ['declined', false, reason],
    ]);
    expect(Date.parse(read.signers[1].declined_at)).not.toBeNaN();
    const listed = await rest<any>(app, 'GET', '/esign/list', {
      token: owner.token,
      query: { page: 1, size: 10, status: 'declined' },
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data.items.map((item: any) => item.client_id)).toContain(session.client_id);

    // Final: nobody signs, nobody declines again, the owner cannot cancel it.
    expect((await signerCall('POST', '/sign', first.token, { consent: true })).status).toBe(409);
    expect((await signerCall('POST', '/decline', first.token, { reason: 'me too' })).status).toBe(409);
    expect((await signerCall('GET', '/document', first.token)).status).toBe(409);
    expect(
      (await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } })).status,
    ).toBe(409);

    // The stamp is available again, with the reason in its history.
    const stamp = await rest<any>(app, 'GET', '/stamps/instance', { token: owner.token, query: { client_id: stampId } });
    expect(stamp.body.data.status).toBe('available');
    expect(stamp.body.data.history.at(-1)).toMatchObject({
      from_status: 'reserved',
      status: 'available',
      session_id: session.client_id,
      reason: 'session_declined',
    });

    // The audit trail keeps who, why and from where.
    const trail = await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } });
    const step = trail.body.data.events.find((event: any) => event.event === 'signer_declined');
    expect(step).toMatchObject({ signer_id: second.signer_id, details: { reason } });
    expect(step.ip).toBeTruthy();

    // The owner's email.
    const mail = await sql<{ recipient: string; subject: string; text_body: string }>(
      `select recipient, subject, text_body from notifications where session_id = ? and kind = 'session_declined'`,
      [session.client_id],
    );
    expect(mail).toHaveLength(1);
    const [{ email }] = await sql<{ email: string }>('select email from users where id = ?', [owner.user_id]);
    expect(mail[0].recipient).toBe(email);
    expect(mail[0].subject).toBe('Vikram Singh declined to sign contract.pdf');
    expect(mail[0].text_body).toContain(reason);

    // The webhook (data: the session as esign/details reads it) and the subscription.
    const [hook] = await receiver.waitFor((all) => all.some((r) => r.json.type === 'esign.session.declined'), 'the webhook');
    const event = receiver.of('esign.session.declined')[0].json;
    expect(hook).toBeTruthy();
    expect(event).toMatchObject({ signer_id: second.signer_id, data: { client_id: session.client_id, status: 'declined' } });
    expect(event.data.signers[1]).toMatchObject({ status: 'declined', decline_reason: reason });
    await expect.poll(() => events.at(-1)?.esignSessionUpdated?.status, { timeout: 10_000 }).toBe('declined');
    expect(events.at(-1).esignSessionUpdated.signers[1]).toMatchObject({ status: 'declined', decline_reason: reason });
    await client.dispose();
  });

  it('a reason is required, at most 500 characters; a refused decline changes nothing', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const token = session.signers[0].token as string;
    for (const body of [{}, { reason: '' }, { reason: '   ' }, { reason: 42 }, { reason: 'x'.repeat(501) }]) {
      const refused = await signerCall('POST', '/decline', token, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body).toMatchObject({ success: false, message: 'bad_request', errors: [{ field: 'reason' }] });
    }
    expect((await details(session.client_id)).status).toBe('pending');
    expect((await signerCall('POST', '/decline', token, { reason: 'x'.repeat(500) })).status).toBe(200);
    expect((await signerCall('POST', '/decline', 'not-a-token', { reason: 'no' })).status).toBe(401);
  });

  it('a decline racing the signature: exactly one wins, and the loser answers 409', async () => {
    for (let round = 0; round < 5; round++) {
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const token = session.signers[0].token as string;
      const [signed, declined] = await Promise.all([
        signerCall('POST', '/sign', token, { consent: true }),
        signerCall('POST', '/decline', token, { reason: 'changed my mind' }),
      ]);
      expect([signed.status, declined.status].sort()).toEqual([200, 409]);
      const status = (await details(session.client_id)).status;
      expect(status).toBe(signed.status === 200 ? 'completed' : 'declined');
    }
  });
});
