import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EsignSession } from '../../src/modules/esign/esign-session.entity';
import { readOwnSessionRecord, readSignerRecords } from '../../src/modules/esign/api/session-rows';
import { toSessionView } from '../../src/modules/esign/api/session.types';
import { toSignerView } from '../../src/modules/esign/api/signer.types';
import { Signer } from '../../src/modules/esign/esign-session.entity';
import { startTestApp, statementsDuring, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { createSession, sessionBody, signatureAt, signerInput, uploadAsset, uploadPdf } from '../helpers/factories';
import { makePng } from '../helpers/fixtures';

/**
 * The details read takes rows past the ORM (session-rows.ts). Whatever a session holds, the views built from
 * those rows must be the views built from the ORM's entities, or a column added to one side only goes unseen.
 */
describe('lean session rows', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let fileId: string;

  const sql = (query: string, params: unknown[] = []) => app.services.orm.em.fork().getConnection().execute(query, params);

  /** The session's view and its signers' views, built from ORM entities and from lean rows. */
  async function bothViews(clientId: string) {
    const em = app.services.orm.em.fork();
    const entity = await em.findOneOrFail(EsignSession, { id: clientId });
    const signers = await em.find(Signer, { session: clientId }, { orderBy: { position: 'asc' } });
    const fromOrm = toSessionView(entity);
    const record = await readOwnSessionRecord(app.services.orm, owner.user_id, clientId);
    expect(record).not.toBeNull();
    const fromRows = toSessionView(record!);
    const leanSigners = (await readSignerRecords(app.services.orm, [clientId])).get(clientId)!;
    const signerViews = (list: Parameters<typeof toSignerView>[0][], session: typeof fromOrm) =>
      list.map((signer) => ({ ...toSignerView(signer, session, 'token', 'url'), sealed: signer.tokenSealed }));
    return {
      orm: { session: fromOrm, signers: signerViews(signers, fromOrm) },
      rows: { session: fromRows, signers: signerViews(leanSigners, fromRows) },
    };
  }

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    other = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
  });
  afterAll(async () => app.close());

  it('a session with only the required fields reads the same both ways', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    const views = await bothViews(session.client_id);
    expect(views.rows).toEqual(views.orm);
    expect(views.rows.session.folder).toBeNull();
    expect(views.rows.signers[0].email_verified_at).toBeNull();
    expect(views.rows.signers[0].language).toBeNull();
  });

  it('a session with every optional column filled reads the same both ways', async () => {
    const asset = await uploadAsset(app, owner.token);
    const face = await uploadAsset(app, owner.token, makePng(64, 64));
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        folder: 'contracts/2026',
        redirect_url: 'https://example.com/done',
        sender: 'Legal team',
        expiry_seconds: 7200,
        email_template_overrides: { company_name: 'Acme', legal_name: 'Acme Pvt Ltd', support_email: 'help@acme.example' },
        signers: [
          signerInput({
            full_name: 'Asha Rao',
            mobile: '9876543210',
            country_code: '+91',
            reason: 'Approve the lease',
            verify_email: true,
            verify_mobile: true,
            enforce_geofence: true,
            latitude: 12.97,
            longitude: 77.59,
            radius: 500,
            face_ref_file_id: face,
            elements: [
              signatureAt(1, 100, 200),
              { x: 10, y: 20, page: 0, type: 'image', alignment: 'center', value: asset, width: 80, height: 40 },
            ],
          }),
          signerInput({ full_name: 'Ravi Kumar', email: 'ravi@example.com' }),
        ],
      }),
    );
    // What only the signing journey and the end of a session write.
    await sql(
      `insert into templates (id, user_id, name, file_id, signers, documents)
       values ('tmpl_rows', ?, 'Lease', ?, '[]'::jsonb, jsonb_build_array(jsonb_build_object('file_id', ?::text, 'name', 'Lease')))`,
      [owner.user_id, fileId, fileId],
    );
    await sql(
      `update esign_sessions set template_id = 'tmpl_rows', template_version = 3, cancel_reason = 'changed terms',
         stamp_page_count = 2 where id = ?`,
      [session.client_id],
    );
    await sql(
      `update esign_signers set email_verified_at = now() - interval '5 minutes', mobile_verified_at = now(),
         location = '{"source":"device","latitude":12.9701,"longitude":77.5902,"accuracy_m":12,"ip":null,"distance_m":25.5,"recorded_at":"2026-11-22T03:00:00.000Z"}'::jsonb,
         aadhaar_cert_details = '{"name":"Asha Rao","country":"IN","state":"Karnataka","pin_code":"560001","aadhaar":"XXXXXXXX1234","year_of_birth":"1990","gender":"F"}'::jsonb,
         pfx_id = 'pfx_x', location_source = 'device', language = 'hi'
       where session_id = ? and position = 0`,
      [session.client_id],
    );
    const views = await bothViews(session.client_id);
    expect(views.rows).toEqual(views.orm);
    expect(views.rows.session).toMatchObject({ folder: 'contracts/2026', template_id: 'tmpl_rows', template_version: 3 });
    expect(views.rows.session.created_at).toBeInstanceOf(Date);
    expect(views.rows.signers[0]).toMatchObject({ mobile: '9876543210', radius: 500, pfx_id: 'pfx_x', language: 'hi' });
    expect(views.rows.signers[0].positions).toEqual({ '3': [{ x: 100, y: 200 }] });
    expect(views.rows.signers[0].email_verified_at).toBeInstanceOf(Date);
    expect(views.rows.signers[0].location).toMatchObject({ distance_m: 25.5 });
  });

  it("another user's session is not found, and the signers of many sessions come in one statement", async () => {
    const first = await createSession(app, owner.token, sessionBody(fileId, { signers: [signerInput(), signerInput()] }));
    const second = await createSession(app, owner.token, sessionBody(fileId));
    expect(await readOwnSessionRecord(app.services.orm, other.user_id, first.client_id)).toBeNull();
    let bySession = new Map();
    // A statement the app runs on its own meanwhile (as a queue sweep would) is not counted.
    const elsewhere = new Promise((resolve) => setTimeout(() => resolve(sql('select 1')), 20));
    const statements = await statementsDuring(app, async () => {
      bySession = await readSignerRecords(app.services.orm, [second.client_id, first.client_id, 'esign_missing']);
      await elsewhere;
    });
    expect(statements).toBe(1);
    expect(bySession.get(first.client_id).map((signer: Signer) => signer.position)).toEqual([0, 1]);
    expect(bySession.get(second.client_id)).toHaveLength(1);
    expect(bySession.get('esign_missing')).toEqual([]);
  });

  it('a due session read through details is settled to expired first, as the ORM path does', async () => {
    const session = await createSession(app, owner.token, sessionBody(fileId));
    await sql(`update esign_sessions set expires_at = now() - interval '1 second' where id = ?`, [session.client_id]);
    const read = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } });
    expect(read.status).toBe(200);
    expect(read.body.data.status).toBe('expired');
    expect(read.body.data.signers[0].eligible).toBe(false);
    const [row] = await sql('select status from esign_sessions where id = ?', [session.client_id]);
    expect(row.status).toBe('expired');
  });
});
