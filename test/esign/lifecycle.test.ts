import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSignature } from '../../src/modules/esign/completion/record-signature';
import {
  EsignSessionDocument,
  EsignSessionNestedDocument,
  EsignSessionsDocument,
  CancelEsignDocument,
} from '../__generated__/graphql';
import { startTestApp, statementsDuring, type TestApp, type TestUser } from '../helpers/app';
import { gql, rest } from '../helpers/clients';
import { corpusFile } from '../helpers/fixtures';
import { createSession, sessionBody, signatureAt, signerInput, uploadAsset, uploadPdf } from '../helpers/factories';

const NOT_FOUND_TEXT = 'Esign client with the given client_id not found';
const NOT_COMPLETED = 'Esign not completed.';

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('session lifecycle', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let fileId: string;

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  /** Moves a session's expiry into the past: the tests cannot wait the one hour minimum. */
  const travelPastExpiry = (clientId: string) =>
    sql(`update esign_sessions set expires_at = now() - interval '1 second' where id = ?`, [clientId]);
  const statusInDatabase = async (clientId: string) =>
    (await sql<{ status: string }>('select status from esign_sessions where id = ?', [clientId]))[0].status;
  const details = (token: string, clientId: string) =>
    rest<any>(app, 'GET', '/esign/details', { token, query: { client_id: clientId } });

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    other = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app.close());

  describe('cancel', () => {
    it('moves a pending session to cancelled with its reason; signers are no longer eligible', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const response = await rest<any>(app, 'POST', '/esign/cancel', {
        token: owner.token,
        json: { client_id: session.client_id, reason: 'wrong draft' },
      });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({
        client_id: session.client_id,
        status: 'cancelled',
        cancel_reason: 'wrong draft',
      });
      expect(response.body.data.signers.every((signer: any) => signer.eligible === false)).toBe(true);
      expect(await statusInDatabase(session.client_id)).toBe('cancelled');

      const again = await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ data: null, status_code: 409, success: false });
      expect(again.body.message).toContain('cancelled');
    });

    it('refuses a missing, unknown or foreign session', async () => {
      const missing = await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: {} });
      expect(missing.status).toBe(400);
      expect(missing.body.message).toBe('missing_fields');
      const unknown = await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: 'esign_nope' } });
      expect(unknown.status).toBe(404);
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const foreign = await rest(app, 'POST', '/esign/cancel', { token: other.token, json: { client_id: session.client_id } });
      expect(foreign.status).toBe(404);
      expect(foreign.body.message).toBe(NOT_FOUND_TEXT);
      expect(await statusInDatabase(session.client_id)).toBe('pending');
      const overGraphQL = await gql(app, other.token, CancelEsignDocument, { client_id: session.client_id });
      expect(overGraphQL.errors?.[0].extensions?.code).toBe('not_found');
    });
  });

  describe('expiry', () => {
    it('queues an expiry job for the moment the session expires', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId, { expiry_seconds: 7200 }));
      const jobs = await sql<{ start_after: Date }>(
        `select start_after from pgboss.job where name = 'esign.expire' and singleton_key = ?`,
        [session.client_id],
      );
      expect(jobs).toHaveLength(1);
      expect(new Date(jobs[0].start_after).toISOString()).toBe(session.expires_at);
    });

    it('never reads as pending after its expiry, even before any job ran', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId, { folder: 'expiring' }));
      await travelPastExpiry(session.client_id);
      const read = await details(owner.token, session.client_id);
      expect(read.body.data.status).toBe('expired');
      expect(read.body.data.signers[0].eligible).toBe(false);
      expect(await statusInDatabase(session.client_id)).toBe('expired');

      const other = await createSession(app, owner.token, sessionBody(fileId, { folder: 'expiring' }));
      await travelPastExpiry(other.client_id);
      const pending = await rest<any>(app, 'GET', '/esign/list', {
        token: owner.token,
        query: { page: 1, size: 10, folder: 'expiring', status: 'pending' },
      });
      expect(pending.body.data.items).toEqual([]);
      const expired = await rest<any>(app, 'GET', '/esign/list', {
        token: owner.token,
        query: { page: 1, size: 10, folder: 'expiring', status: 'expired' },
      });
      expect(expired.body.data.items.map((item: any) => item.client_id).sort()).toEqual(
        [session.client_id, other.client_id].sort(),
      );
    });

    it('is applied by the expiry job and by the sweep, each exactly once', async () => {
      const byJob = await createSession(app, owner.token, sessionBody(fileId));
      const bySweep = await createSession(app, owner.token, sessionBody(fileId));
      const notDue = await createSession(app, owner.token, sessionBody(fileId));
      await travelPastExpiry(byJob.client_id);
      await travelPastExpiry(bySweep.client_id);

      await app.services.boss.send('esign.expire', { client_id: byJob.client_id });
      await until(
        () => statusInDatabase(byJob.client_id),
        (status) => status === 'expired',
        'the expiry job',
      );
      await app.services.boss.send('esign.expire-sweep', {});
      await until(
        () => statusInDatabase(bySweep.client_id),
        (status) => status === 'expired',
        'the sweep',
      );
      // A job that runs early leaves the session alone: read once the job has run, not after a while.
      const early = await app.services.boss.send('esign.expire', { client_id: notDue.client_id });
      expect(early).toBeTruthy();
      await until(
        () => sql<{ state: string }>('select state from pgboss.job where id = ?::uuid', [early]),
        (rows) => rows[0]?.state === 'completed',
        'the early expiry job to run',
      );
      expect(await statusInDatabase(notDue.client_id)).toBe('pending');

      const ended = await sql<{ ended_at: Date }>('select ended_at from esign_sessions where id = ?', [byJob.client_id]);
      expect(ended[0].ended_at).not.toBeNull();
    });

    it('cannot cancel an expired session', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId));
      await travelPastExpiry(session.client_id);
      const response = await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } });
      expect(response.status).toBe(409);
      expect(await statusInDatabase(session.client_id)).toBe('expired');
    });
  });

  describe('signing progress and download', () => {
    it('passes the turn in order, completes with the last signer, and only then serves the signed PDF', async () => {
      const session = await createSession(
        app,
        owner.token,
        sessionBody(fileId, {
          signers: [signerInput(), signerInput({ full_name: 'Second' }), signerInput({ full_name: 'Third' })],
        }),
      );
      const download = () =>
        rest<any>(app, 'GET', '/esign/download-pdf', { token: owner.token, query: { client_id: session.client_id } });
      const notYet = await download();
      expect(notYet.status).toBe(404);
      expect(notYet.body).toEqual({ data: null, status_code: 404, message: NOT_COMPLETED, success: false });

      const em = () => app.services.orm.em.fork();
      // Out of turn is refused.
      await expect(
        recordSignature(app.services, em(), {
          sessionId: session.client_id,
          signerId: session.signers[1].signer_id,
          signedPdfs: new Map([[0, corpusFile('001-trivial/minimal-document.pdf')]]),
        }),
      ).rejects.toMatchObject({ code: 'conflict' });

      const revisions = [
        corpusFile('001-trivial/minimal-document.pdf'),
        corpusFile('002-trivial-libre-office-writer/002-trivial-libre-office-writer.pdf'),
        corpusFile('006-pdflatex-outline/pdflatex-outline.pdf'),
      ];
      for (const [index, signer] of session.signers.entries()) {
        await recordSignature(app.services, em(), {
          sessionId: session.client_id,
          signerId: signer.signer_id,
          signedPdfs: new Map([[0, revisions[index]]]),
        });
        const read = (await details(owner.token, session.client_id)).body.data;
        expect(read.signers[index].status).toBe('completed');
        expect(read.current_pdf_file_id).not.toBe(fileId);
        expect(read.file_id).toBe(fileId);
        if (index < 2) {
          expect(read).toMatchObject({ status: 'pending', signer_idx: index + 1 });
          expect(read.signers.map((s: any) => s.eligible)).toEqual([0, 1, 2].map((i) => i === index + 1));
          expect((await download()).status).toBe(404);
        } else {
          expect(read).toMatchObject({ status: 'completed', signer_idx: 3 });
          expect(read.signers.every((s: any) => !s.eligible)).toBe(true);
        }
      }

      const ready = await download();
      expect(ready.status).toBe(200);
      expect(Object.keys(ready.body.data).sort()).toEqual(['expires_in', 'url']);
      expect(ready.body.data.expires_in).toBe(300);
      const pdf = await fetch(ready.body.data.url);
      expect(pdf.status).toBe(200);
      expect(pdf.headers.get('content-type')).toBe('application/pdf');
      expect(pdf.headers.get('content-disposition')).toContain('contract-signed.pdf');
      expect(Buffer.from(await pdf.arrayBuffer()).equals(revisions[2])).toBe(true);

      // A completed session cannot be cancelled, and the last signature cannot be recorded twice.
      expect(
        (await rest(app, 'POST', '/esign/cancel', { token: owner.token, json: { client_id: session.client_id } })).status,
      ).toBe(409);
      await expect(
        recordSignature(app.services, em(), {
          sessionId: session.client_id,
          signerId: session.signers[2].signer_id,
          signedPdfs: new Map([[0, revisions[2]]]),
        }),
      ).rejects.toMatchObject({ code: 'conflict' });
    });

    it('answers download-pdf of an unknown or foreign session with the same 404', async () => {
      const unknown = await rest(app, 'GET', '/esign/download-pdf', { token: owner.token, query: { client_id: 'esign_nope' } });
      expect(unknown.status).toBe(404);
      expect(unknown.body.message).toBe(NOT_COMPLETED);
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const foreign = await rest(app, 'GET', '/esign/download-pdf', {
        token: other.token,
        query: { client_id: session.client_id },
      });
      expect(foreign.status).toBe(404);
      expect(foreign.body.message).toBe(NOT_COMPLETED);
    });
  });

  describe('reads', () => {
    it('are scoped to the owner on every face', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId));
      const foreign = await details(other.token, session.client_id);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ data: null, status_code: 404, message: NOT_FOUND_TEXT, success: false });
      const unknown = await details(owner.token, 'esign_unknown');
      expect(unknown.body.message).toBe(NOT_FOUND_TEXT);
      const list = await rest<any>(app, 'GET', '/esign/list', { token: other.token, query: { page: 1, size: 100 } });
      expect(list.body.data).toEqual({ items: [], has_next: false });
      const overGraphQL = await gql(app, other.token, EsignSessionDocument, { client_id: session.client_id });
      expect(overGraphQL.errors?.[0]).toMatchObject({ message: NOT_FOUND_TEXT, extensions: { code: 'not_found' } });
    });

    it('list pages through sessions newest first, with status and folder filters', async () => {
      const user = await app.createUser();
      const pdf = await uploadPdf(app, user.token);
      const made: string[] = [];
      for (let i = 0; i < 5; i++)
        made.push((await createSession(app, user.token, sessionBody(pdf, { folder: i < 3 ? 'a' : 'b' }))).client_id);
      const page = (query: Record<string, string | number>) => rest<any>(app, 'GET', '/esign/list', { token: user.token, query });

      const first = await page({ page: 1, size: 2 });
      expect(first.body.data.items.map((item: any) => item.client_id)).toEqual([made[4], made[3]]);
      expect(first.body.data.has_next).toBe(true);
      const third = await page({ page: 3, size: 2 });
      expect(third.body.data.items.map((item: any) => item.client_id)).toEqual([made[0]]);
      expect(third.body.data.has_next).toBe(false);
      expect((await page({ page: 1, size: 10, folder: 'a' })).body.data.items).toHaveLength(3);
      // Items are full sessions, as in the details read.
      expect(first.body.data.items[0].signers[0].token).toBeTruthy();

      await rest(app, 'POST', '/esign/cancel', { token: user.token, json: { client_id: made[1] } });
      const cancelled = await page({ page: 1, size: 10, status: 'cancelled' });
      expect(cancelled.body.data.items.map((item: any) => item.client_id)).toEqual([made[1]]);
      expect((await page({ page: 1, size: 10, status: 'pending', folder: 'a' })).body.data.items).toHaveLength(2);

      const badStatus = await page({ page: 1, size: 10, status: 'done' });
      expect(badStatus.status).toBe(400);
      expect(badStatus.body.errors).toEqual([
        { field: 'status', problem: 'must be one of pending, completed, expired, cancelled, declined' },
      ]);
      const badPage = await page({ page: 0, size: 101 });
      expect(badPage.status).toBe(400);
      // An added list: a page given without a size is the first 20 (issue 15 made page and size optional).
      const defaulted = await rest<{ items: unknown[] }>(app, 'GET', '/esign/list', { token: user.token, query: { page: 1 } });
      expect(defaulted.status).toBe(200);
      expect(defaulted.body.data!.items.length).toBeLessThanOrEqual(20);
    });

    it('compose nested GraphQL reads: session -> source file, signers -> elements -> asset', async () => {
      const asset = await uploadAsset(app, owner.token);
      const session = await createSession(
        app,
        owner.token,
        sessionBody(fileId, {
          signers: [
            signerInput({ elements: [signatureAt(), { x: 1, y: 2, page: 1, type: 'image', alignment: 'left', value: asset }] }),
          ],
        }),
      );
      const read = await gql(app, owner.token, EsignSessionNestedDocument, { client_id: session.client_id });
      expect(read.errors).toBeUndefined();
      expect(read.data!.esignSession.source_file).toEqual({ client_id: fileId, page_count: 4 });
      expect(read.data!.esignSession.current_pdf_file.client_id).toBe(fileId);
      expect(read.data!.esignSession.signers[0].elements.map((e) => e.asset?.client_id ?? null)).toEqual([null, asset]);
      // The REST face keeps to the contract's fields: no nested files.
      const restRead = await details(owner.token, session.client_id);
      expect(restRead.body.data.source_file).toBeUndefined();
      expect(restRead.body.data.signers[0].elements[1].asset).toBeUndefined();
    });

    it('never writes signer tokens or download grants to the logs', async () => {
      const session = await createSession(app, owner.token, sessionBody(fileId, { signers: [signerInput(), signerInput()] }));
      await details(owner.token, session.client_id);
      const fileRead = await rest<any>(app, 'GET', '/files/details', { token: owner.token, query: { client_id: fileId } });
      const grant = new URL(fileRead.body.data.download_url).pathname.split('/').pop()!;
      expect((await fetch(fileRead.body.data.download_url)).status).toBe(200);
      const logs = JSON.stringify(app.logs);
      for (const signer of session.signers) expect(logs).not.toContain(signer.token);
      expect(logs).not.toContain(grant);
      expect(logs).toContain('/downloads/[redacted]');
    });

    it('batch nested reads: a page of 50 sessions costs as many SQL statements as a page of 1', async () => {
      const user = await app.createUser();
      const pdf = await uploadPdf(app, user.token);
      const asset = await uploadAsset(app, user.token);
      const signer = (name: string) =>
        signerInput({
          full_name: name,
          elements: [signatureAt(0), { x: 1, y: 2, page: 1, type: 'image', alignment: 'left', value: asset }],
        });
      for (let i = 0; i < 50; i++) {
        await createSession(app, user.token, sessionBody(pdf, { signers: [signer('A'), signer('B'), signer('C')] }));
      }
      const countStatements = async (size: number) => {
        return statementsDuring(app, async () => {
          const result = await gql(app, user.token, EsignSessionsDocument, { page: 1, size });
          expect(result.errors).toBeUndefined();
          expect(result.data!.esignSessions.items).toHaveLength(size);
          expect(result.data!.esignSessions.items.every((item) => item.signers.length === 3)).toBe(true);
          expect(result.data!.esignSessions.items[0].signers[0].elements[1].asset?.client_id).toBe(asset);
        });
      };
      const one = await countStatements(1);
      const fifty = await countStatements(50);
      expect(fifty).toBe(one);
      expect(fifty).toBeLessThanOrEqual(6);
    });
  });
});
