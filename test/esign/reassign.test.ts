/**
 * Issue 21, reassign: the owner hands a pending signer's place to another person. The old invite link dies at once,
 * the new person gets a new token and (at their turn) an invite, and the audit trail says who replaced whom.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';

describe('reassign-signer', () => {
  let app: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  let fileId: string;

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  const invitesTo = async (signerId: string) =>
    (
      await sql<{ recipient: string }>(
        `select recipient from notifications where signer_id = ? and kind = 'invite' order by created_at`,
        [signerId],
      )
    ).map((row) => row.recipient);
  const signerCall = (method: 'GET' | 'POST', path: string, token: string, json?: unknown) =>
    signerApi(app, method, path, token, json);
  /** The digits of the newest email code sent to this signer's place, checking the address it went to. */
  const lastCodeSentTo = async (signerId: string, address: string) => {
    const [otp] = await sql<{ text_body: string; recipient: string }>(
      `select text_body, recipient from notifications where signer_id = ? and kind = 'email_otp' order by created_at desc limit 1`,
      [signerId],
    );
    expect(otp.recipient).toBe(address);
    return /\b(\d{6})\b/.exec(otp.text_body)![1];
  };
  const reassign = (token: string, json: Record<string, unknown>) =>
    rest<any>(app, 'POST', '/esign/reassign-signer', { token, json });

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    stranger = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app?.close());

  it('replaces the current signer: new token, the old link is dead, the new person is invited, signs, and it is audited', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        signers: [
          signerInput({ full_name: 'Asha Rao', email: 'asha@example.com', verify_email: true, notification: { invite: true } }),
          signerInput({ full_name: 'Vikram Singh', email: 'vikram@example.com', notification: { invite: true } }),
        ],
      }),
    );
    const [first, second] = session.signers;
    expect(await invitesTo(first.signer_id)).toEqual(['asha@example.com']);
    // Asha asks for her email code before she is replaced: it must prove nothing for the next person.
    expect((await signerCall('POST', '/otp/send', first.token as string, { channel: 'email' })).status).toBe(200);
    const ashasCode = await lastCodeSentTo(first.signer_id, 'asha@example.com');

    const answer = await reassign(owner.token, {
      client_id: session.client_id,
      signer_id: first.signer_id,
      full_name: 'Meera Iyer',
      email: 'meera@example.com',
      mobile: '9876543210',
      country_code: '+91',
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const replaced = answer.body.data.signers[0];
    expect(replaced).toMatchObject({
      signer_id: first.signer_id,
      full_name: 'Meera Iyer',
      email: 'meera@example.com',
      mobile: '9876543210',
      country_code: '91',
      status: 'pending',
      eligible: true,
      email_verified_at: null,
    });
    expect(replaced.token).not.toBe(first.token);
    expect(replaced.invite_url).toContain(replaced.token);

    // The old link is dead at once; the new one opens the same place.
    expect((await signerCall('GET', '/session', first.token as string)).status).toBe(401);
    const view = await signerCall('GET', '/session', replaced.token);
    expect(view.status).toBe(200);
    expect(view.body.data.signer).toMatchObject({ signer_id: first.signer_id, full_name: 'Meera Iyer' });
    expect(await invitesTo(first.signer_id)).toEqual(['asha@example.com', 'meera@example.com']);

    const trail = await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } });
    expect(trail.body.data.events.find((event: any) => event.event === 'signer_reassigned')).toMatchObject({
      signer_id: first.signer_id,
      details: {
        by: owner.user_id,
        before: { full_name: 'Asha Rao', email: 'asha@example.com', mobile: null },
        after: { full_name: 'Meera Iyer', email: 'meera@example.com', mobile: '9876543210' },
      },
    });

    // The second signer, replaced before their turn: no invite yet; it goes to the new person when the turn comes.
    const later = await reassign(owner.token, {
      client_id: session.client_id,
      signer_id: second.signer_id,
      email: 'legal@acme.example',
    });
    expect(later.status, JSON.stringify(later.body)).toBe(200);
    expect(later.body.data.signers[1]).toMatchObject({ full_name: 'Vikram Singh', email: 'legal@acme.example' });
    expect(await invitesTo(second.signer_id)).toEqual([]);

    // Asha's code, still open and in time, does not prove Meera's email: no code of Meera's is open.
    const borrowed = await signerCall('POST', '/otp/verify', replaced.token, { channel: 'email', code: ashasCode });
    expect(borrowed.status).toBe(400);
    expect(borrowed.body).toMatchObject({
      message: 'otp_expired',
      errors: [{ field: 'code', problem: 'no code is open: request a new one' }],
    });
    const [signerRow] = await sql<{ email_verified_at: Date | null }>(
      'select email_verified_at from esign_signers where id = ?',
      [first.signer_id],
    );
    expect(signerRow.email_verified_at).toBeNull();

    // Meera proves her own email (the check starts again for her; Asha's code moments ago does not hold her back),
    // then signs; the turn passes.
    const code = await signerCall('POST', '/otp/send', replaced.token, { channel: 'email' });
    expect(code.status, JSON.stringify(code.body)).toBe(200);
    const digits = await lastCodeSentTo(first.signer_id, 'meera@example.com');
    expect((await signerCall('POST', '/otp/verify', replaced.token, { channel: 'email', code: digits })).status).toBe(200);
    expect((await signerCall('POST', '/sign', replaced.token, { consent: true })).status).toBe(200);
    expect(await invitesTo(second.signer_id)).toEqual(['legal@acme.example']);

    // A signer who signed keeps their place.
    const signed = await reassign(owner.token, { client_id: session.client_id, signer_id: first.signer_id, full_name: 'X' });
    expect(signed.status).toBe(409);
    expect(signed.body.errors).toEqual([{ field: 'signer_id', problem: 'the signer is completed' }]);
  });

  it('checks its input like initialize-esign; another user’s session is 404; an ended session is 409', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const signerId = session.signers[0].signer_id;
    const cases: [Record<string, unknown>, number, string][] = [
      [{}, 400, 'missing_fields'],
      [{ client_id: session.client_id, signer_id: signerId }, 400, 'bad_request'],
      [{ client_id: session.client_id, signer_id: signerId, email: 'not-an-email' }, 400, 'bad_request'],
      [{ client_id: session.client_id, signer_id: signerId, mobile: '12', country_code: '91' }, 400, 'bad_request'],
      [{ client_id: session.client_id, signer_id: signerId, mobile: '9876543210' }, 400, 'missing_fields'],
      [{ client_id: session.client_id, signer_id: 'signer_0000', full_name: 'X' }, 404, 'not_found'],
    ];
    for (const [json, status, message] of cases) {
      const refused = await reassign(owner.token, json);
      expect(refused.status, JSON.stringify(json)).toBe(status);
      expect(refused.body.message).toBe(message);
    }
    const foreign = await reassign(stranger.token, { client_id: session.client_id, signer_id: signerId, full_name: 'X' });
    expect(foreign.status).toBe(404);
    expect((await signerCall('GET', '/session', session.signers[0].token as string)).status).toBe(200);

    await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
    const ended = await reassign(owner.token, { client_id: session.client_id, signer_id: signerId, full_name: 'X' });
    expect(ended.status).toBe(409);
  });

  it('a signer delegates when the session allows it: the same hand-over, audited as signer_delegated', async () => {
    const allowed = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        allow_delegation: true,
        signers: [signerInput({ full_name: 'Asha Rao', notification: { invite: true } })],
      }),
    );
    expect(allowed.allow_delegation).toBe(true);
    const signer = allowed.signers[0];
    expect((await signerCall('POST', '/delegate', signer.token as string, { email: 'x@example.com' })).status).toBe(400);
    const delegated = await signerCall('POST', '/delegate', signer.token as string, {
      full_name: 'Ravi Kumar',
      email: 'ravi@example.com',
    });
    expect(delegated.status, JSON.stringify(delegated.body)).toBe(200);
    expect(delegated.body.data).toEqual({ delegated_to: 'Ravi Kumar' });
    expect((await signerCall('GET', '/session', signer.token as string)).status).toBe(401);
    const read = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: allowed.client_id } });
    expect(read.body.data.signers[0]).toMatchObject({
      signer_id: signer.signer_id,
      full_name: 'Ravi Kumar',
      email: 'ravi@example.com',
    });
    expect(read.body.data.signers[0].token).not.toBe(signer.token);
    expect(await invitesTo(signer.signer_id)).toEqual(['asha@example.com', 'ravi@example.com']);
    const trail = await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: allowed.client_id } });
    expect(trail.body.data.events.find((event: any) => event.event === 'signer_delegated')).toMatchObject({
      signer_id: signer.signer_id,
      details: { by: signer.signer_id, before: { full_name: 'Asha Rao' }, after: { full_name: 'Ravi Kumar' } },
    });

    const closed = await createSession(app, owner.token, sessionBody(fileId));
    expect(closed.allow_delegation).toBe(false);
    const refused = await signerCall('POST', '/delegate', closed.signers[0].token as string, { full_name: 'Ravi Kumar' });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe('this session does not allow delegation');
    expect((await signerCall('GET', '/session', closed.signers[0].token as string)).status).toBe(200);
  });
});
