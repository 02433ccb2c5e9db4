/**
 * Issue 21, reminders: every `reminder_interval_hours` the signer whose turn it is gets the invite again, at most
 * `reminder_max` times; signing, declining and the session's end stop them. The sweep is the one the cron job runs;
 * the clock is moved by moving the rows' times back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDueReminders } from '../../src/modules/esign/signers/send-reminders';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';

describe('reminders', () => {
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  const sweep = () => sendDueReminders(app.services, app.services.orm.em.fork());
  const reminders = async (signerId: string) =>
    (
      await sql<{ recipient: string; subject: string }>(
        `select recipient, subject from notifications where signer_id = ? and kind = 'reminder' order by created_at`,
        [signerId],
      )
    ).map((row) => `${row.recipient}: ${row.subject}`);
  /** Moves the signer's invite and last reminder back by `hours`. */
  const wait = (signerId: string, hours: number) =>
    sql(
      `update esign_signers set invited_at = invited_at - make_interval(hours => ?),
              last_reminded_at = last_reminded_at - make_interval(hours => ?) where id = ?`,
      [hours, hours, signerId],
    );
  async function signerCall(path: string, token: string, json: unknown) {
    const response = await fetch(new URL(`/signer-api${path}`, app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    return response.status;
  }

  beforeAll(async () => {
    // The cron sweep is left to the test: RUN_WORKERS would send the same reminders on its own minute.
    app = await startTestApp({ env: { RUN_WORKERS: 'false' } });
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app?.close());

  it('reminds the current signer every interval, at most reminder_max times, then the next signer from their turn', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        reminder_interval_hours: 24,
        reminder_max: 2,
        signers: [
          signerInput({ full_name: 'Asha Rao', email: 'asha@example.com', notification: { invite: true } }),
          signerInput({ full_name: 'Vikram Singh', email: 'vikram@example.com', notification: { invite: true } }),
        ],
      }),
    );
    expect(session).toMatchObject({ reminder_interval_hours: 24, reminder_max: 2 });
    const [first, second] = session.signers;

    expect(await sweep()).toEqual([]);
    await wait(first.signer_id, 23);
    expect(await sweep()).toEqual([]);
    await wait(first.signer_id, 1);
    expect(await sweep()).toEqual([first.signer_id]);
    expect(await sweep()).toEqual([]);
    expect(await reminders(first.signer_id)).toEqual(['asha@example.com: Reminder: Please sign “contract.pdf”']);
    await wait(first.signer_id, 24);
    expect(await sweep()).toEqual([first.signer_id]);
    await wait(first.signer_id, 48);
    expect(await sweep()).toEqual([]);
    expect(await reminders(first.signer_id)).toHaveLength(2);

    // Her signature moves the turn: the next signer's reminders count from their own invite.
    expect(await signerCall('/sign', first.token as string, { consent: true })).toBe(200);
    expect(await sweep()).toEqual([]);
    await wait(second.signer_id, 24);
    expect(await sweep()).toEqual([second.signer_id]);
    expect(await reminders(second.signer_id)).toEqual(['vikram@example.com: Reminder: Please sign “contract.pdf”']);

    const trail = await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } });
    const sent = trail.body.data.events.filter((event: any) => event.event === 'reminder_sent');
    expect(sent.map((event: any) => [event.signer_id, event.details.reminder, event.details.of])).toEqual([
      [first.signer_id, 1, 2],
      [first.signer_id, 2, 2],
      [second.signer_id, 1, 2],
    ]);
  });

  it('stops when the signer declines or the session is cancelled; sessions without reminders get none', async () => {
    const declined = await createSession(app, owner.token, sessionBody(fileId, { reminder_interval_hours: 1 }));
    const cancelled = await createSession(app, owner.token, sessionBody(fileId, { reminder_interval_hours: 1 }));
    const none = await createSession(app, owner.token, sessionBody(fileId));
    expect(none).toMatchObject({ reminder_interval_hours: null, reminder_max: 3 });
    expect(await signerCall('/decline', declined.signers[0].token as string, { reason: 'no' })).toBe(200);
    await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: cancelled.client_id } });
    for (const session of [declined, cancelled, none]) {
      await sql(`update esign_sessions set created_at = created_at - interval '48 hours' where id = ?`, [session.client_id]);
      await wait(session.signers[0].signer_id, 48);
    }
    expect(await sweep()).toEqual([]);
  });

  it('checks the options: whole hours 1 to 720, reminder_max 1 to 10 and only with an interval', async () => {
    for (const [options, field] of [
      [{ reminder_interval_hours: 0 }, 'reminder_interval_hours'],
      [{ reminder_interval_hours: 721 }, 'reminder_interval_hours'],
      [{ reminder_interval_hours: 1.5 }, 'reminder_interval_hours'],
      [{ reminder_interval_hours: 2, reminder_max: 11 }, 'reminder_max'],
      [{ reminder_max: 2 }, 'reminder_max'],
    ] as const) {
      const refused = await rest<any>(app, 'POST', '/esign/initialize-esign', {
        token: owner.token,
        json: sessionBody(fileId, options),
      });
      expect(refused.status, JSON.stringify(options)).toBe(400);
      expect(refused.body.errors!.map((error: any) => error.field)).toContain(field);
    }
  });
});
