/**
 * Issue 21, resend: the owner sends the invite of the signer whose turn it is again, by hand, at most three times an
 * hour per signer. The messages land in the outbox (real rows, delivered by the notification jobs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';

describe('resend-invite', () => {
  let app: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  let fileId: string;

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  const invites = async (signerId: string) =>
    (await sql<{ n: number }>(`select count(*)::int as n from notifications where signer_id = ? and kind = 'invite'`, [signerId]))[0]
      .n;
  const resend = (token: string, json: Record<string, unknown>) => rest<any>(app, 'POST', '/esign/resend-invite', { token, json });

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    stranger = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app?.close());

  it('sends the current signer’s invite again, three times an hour, then 429 with the wait; audited', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        signers: [
          signerInput({ full_name: 'Asha Rao', email: 'asha@example.com' }),
          signerInput({ full_name: 'Vikram Singh', email: 'vikram@example.com' }),
        ],
      }),
    );
    const [first, second] = session.signers;
    const before = await invites(first.signer_id);
    for (let left = 2; left >= 0; left--) {
      const answer = await resend(owner.token, { client_id: session.client_id, signer_id: first.signer_id });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.data).toEqual({
        client_id: session.client_id,
        signer_id: first.signer_id,
        messages: 1,
        resends_left_this_hour: left,
      });
    }
    expect(await invites(first.signer_id)).toBe(before + 3);
    const [mail] = await sql<{ recipient: string; text_body: string }>(
      `select recipient, text_body from notifications where signer_id = ? and kind = 'invite' order by created_at desc limit 1`,
      [first.signer_id],
    );
    expect(mail.recipient).toBe('asha@example.com');
    expect(mail.text_body).toContain('/sign/');

    const limited = await resend(owner.token, { client_id: session.client_id, signer_id: first.signer_id });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ success: false, message: 'rate_limited', errors: [{ field: 'signer_id' }] });
    expect(limited.body.errors![0].problem).toMatch(/at most 3 resends an hour per signer; retry in \d+ s/);
    expect(await invites(first.signer_id)).toBe(before + 3);

    // Not their turn yet: nothing is sent.
    const early = await resend(owner.token, { client_id: session.client_id, signer_id: second.signer_id });
    expect(early.status).toBe(409);
    expect(await invites(second.signer_id)).toBe(0);

    const trail = await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } });
    const resent = trail.body.data.events.filter((event: any) => event.event === 'invite_resent');
    expect(resent).toHaveLength(3);
    expect(resent[0]).toMatchObject({ signer_id: first.signer_id, details: { by: owner.user_id, messages: 1 } });
  });

  it('GraphQL resendInvite answers the same; another user’s session or an unknown signer is 404; fields are required', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const signerId = session.signers[0].signer_id;
    const response = await fetch(new URL('/graphql', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({
        query: `mutation ($id: String, $signer: String) { resendInvite(client_id: $id, signer_id: $signer) { client_id signer_id messages resends_left_this_hour } }`,
        variables: { id: session.client_id, signer: signerId },
      }),
    });
    const answer = { body: (await response.json()) as any };
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.resendInvite).toMatchObject({ client_id: session.client_id, signer_id: signerId, resends_left_this_hour: 2 });

    const foreign = await resend(stranger.token, { client_id: session.client_id, signer_id: signerId });
    expect(foreign.status).toBe(404);
    const unknownSigner = await resend(owner.token, { client_id: session.client_id, signer_id: 'signer_0000' });
    expect(unknownSigner.status).toBe(404);
    expect(unknownSigner.body.errors).toEqual([{ field: 'signer_id', problem: 'no such signer in this session' }]);
    const missing = await resend(owner.token, {});
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe('missing_fields');
  });

  it('refuses a session that is no longer pending (409) and a signer with nowhere to send (400)', async () => {
    const cancelled = await createSession(app, owner.token, sessionBody(fileId));
    await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: cancelled.client_id } });
    const late = await resend(owner.token, { client_id: cancelled.client_id, signer_id: cancelled.signers[0].signer_id });
    expect(late.status).toBe(409);
    expect(late.body.errors).toEqual([{ field: 'signer_id', problem: 'the session is cancelled' }]);

    const nowhere = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { signers: [signerInput({ email: undefined })] }),
    );
    const refused = await resend(owner.token, { client_id: nowhere.client_id, signer_id: nowhere.signers[0].signer_id });
    expect(refused.status).toBe(400);
    expect(refused.body.errors![0]).toMatchObject({ field: 'signer_id' });
  });
});
