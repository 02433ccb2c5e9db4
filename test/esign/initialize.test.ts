import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EsignSessionDocument, InitializeEsignDocument } from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { uploadTestPfx } from '../helpers/pfx';
import { gql, rest } from '../helpers/clients';
import { initializeEsign, sessionBody, signatureAt, signerInput, uploadAsset, uploadPdf } from '../helpers/factories';

const SESSION_KEYS = [
  'actor_id',
  'actor_type',
  'allow_delegation',
  'allow_download',
  'append_certificate',
  'archived',
  'auth_mode',
  'backend',
  'cancel_reason',
  'client_id',
  'created_at',
  'current_pdf_file_id',
  'email_template_overrides',
  'expires_at',
  'expiry_seconds',
  'file_id',
  'filename',
  'folder',
  'max_retry',
  'redirect_url',
  'reminder_interval_hours',
  'reminder_max',
  'sender',
  'sign_type',
  'signer_idx',
  'signers',
  'signing_order',
  'stamps',
  'status',
  'template_id',
  'template_version',
  'user_id',
];
const SIGNER_KEYS = [
  'aadhaar_cert_details',
  'accept_virtual_sign',
  'auth_mode',
  'country_code',
  'decline_reason',
  'declined_at',
  'elements',
  'eligible',
  'email',
  'email_verified_at',
  'enforce_geofence',
  'face_match',
  'full_name',
  'invite_url',
  'language',
  'latitude',
  'location',
  'location_source',
  'longitude',
  'max_retry',
  'mobile',
  'mobile_verified_at',
  'name_match',
  'notification',
  'pfx_id',
  'positions',
  'radius',
  'reason',
  'sign_type',
  'signer_id',
  'status',
  'token',
  'verify_email',
  'verify_location',
  'verify_mobile',
];

describe('initialize-esign', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let fileId: string;
  let assetId: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    other = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
    assetId = await uploadAsset(app, owner.token);
  });
  afterAll(async () => app.close());

  async function refused(body: Record<string, unknown>, status: number, message: string) {
    const response = await initializeEsign(app, owner.token, body);
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ data: null, status_code: status, message, success: false });
    return response.body.errors ?? [];
  }

  it('creates a pending session whose details read shows every documented field', async () => {
    const response = await initializeEsign(
      app,
      owner.token,
      sessionBody(fileId, {
        signers: [
          signerInput({ elements: [signatureAt(3, 100, 700), signatureAt(3, 300, 700), signatureAt(1)] }),
          signerInput({
            full_name: 'Vikram Singh',
            email: undefined,
            mobile: '9876543210',
            country_code: '+91',
            sign_type: 'aadhaar',
            name_match: true,
          }),
        ],
      }),
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status_code: 200, message: 'Success', success: true });
    const created = response.body.data!;
    expect(created.client_id).toMatch(/^esign_[0-9a-f]{32}$/);
    expect(created.status).toBe('pending');

    const details = await rest<any>(app, 'GET', '/esign/details', {
      token: owner.token,
      query: { client_id: created.client_id },
    });
    expect(details.status).toBe(200);
    const session = details.body.data;
    expect(Object.keys(session).sort()).toEqual(SESSION_KEYS);
    expect(session).toMatchObject({
      user_id: owner.user_id,
      actor_id: owner.user_id,
      actor_type: 'user',
      sign_type: 'suresign',
      auth_mode: [1],
      backend: 'sandbox',
      file_id: fileId,
      current_pdf_file_id: fileId,
      filename: 'contract.pdf',
      allow_download: true,
      archived: false,
      expiry_seconds: 604800,
      max_retry: 3,
      signer_idx: 0,
      status: 'pending',
    });
    expect(new Date(session.expires_at).getTime() - new Date(session.created_at).getTime()).toBe(604800 * 1000);

    const [first, second] = session.signers;
    expect(Object.keys(first).sort()).toEqual(SIGNER_KEYS);
    expect(first.signer_id).toMatch(/^signer_/);
    expect(first.eligible).toBe(true);
    expect(second.eligible).toBe(false);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 bits, base64url
    expect(first.token).not.toBe(second.token);
    expect(first.invite_url).toBe(`${app.url}/sign/${first.token}`);
    expect(first.aadhaar_cert_details).toBeNull();
    expect(first.name_match).toEqual({ enforce: false, prefill_name: null, signer_name: null, score: null, status: 'skipped' });
    expect(second.name_match).toEqual({
      enforce: true,
      prefill_name: 'Vikram Singh',
      signer_name: null,
      score: null,
      status: 'pending',
    });
    expect(second).toMatchObject({ sign_type: 'aadhaar', mobile: '9876543210', country_code: '91', aadhaar_cert_details: null });
    expect(first.face_match).toEqual({
      enforce: false,
      ref_file_id: null,
      live_file_id: null,
      match_threshold: null,
      max_attempts: null,
      liveness_score: null,
      match_score: null,
    });
    expect(first.notification).toEqual({ invite: false, completion: false, whatsapp: false });
    expect(first.positions).toEqual({
      '3': [
        { x: 100, y: 700 },
        { x: 300, y: 700 },
      ],
      '1': [{ x: 72, y: 600 }],
    });
    expect(first.elements[0]).toMatchObject({
      x: 100,
      y: 700,
      page: 3,
      type: 'signature',
      alignment: 'left',
      width: 160,
      height: 50,
      font_size: 10,
    });
    expect(first.elements[0].field_id).toMatch(/^field_/);
    expect(second.positions).toEqual({ '0': [{ x: 72, y: 600 }] });
  });

  it('stores every session-level option and face match settings with their documented defaults', async () => {
    const response = await initializeEsign(
      app,
      owner.token,
      sessionBody(fileId, {
        auth_mode: 2,
        folder: 'leases/2026',
        expiry_seconds: 3600,
        max_retry: 5,
        allow_download: false,
        redirect_url: 'https://example.com/done?x=1',
        backend: 'sandbox',
        sender: 'Acme Legal',
        email_template_overrides: { company_name: 'Acme', legal_name: 'Acme Pvt Ltd', support_email: 'help@acme.example' },
        signers: [
          signerInput({ face_ref_file_id: assetId, notification: { invite: true, completion: true } }),
          signerInput({
            face_ref_file_id: assetId,
            face_match_threshold: 92.5,
            face_max_attempts: 2,
            max_retry: 1,
            reason: 'Witness',
          }),
          signerInput({ verify_location: true, enforce_geofence: true, latitude: 12.97, longitude: 77.59, radius: 500 }),
        ],
      }),
    );
    expect(response.status).toBe(200);
    const session = response.body.data as any;
    expect(session).toMatchObject({
      auth_mode: [2],
      folder: 'leases/2026',
      expiry_seconds: 3600,
      max_retry: 5,
      allow_download: false,
      redirect_url: 'https://example.com/done?x=1',
      sender: 'Acme Legal',
      email_template_overrides: { company_name: 'Acme', legal_name: 'Acme Pvt Ltd', support_email: 'help@acme.example' },
    });
    expect(session.signers[0].face_match).toMatchObject({
      enforce: true,
      ref_file_id: assetId,
      match_threshold: 80,
      max_attempts: 5,
    });
    expect(session.signers[0].notification).toEqual({ invite: true, completion: true, whatsapp: false });
    expect(session.signers[0].max_retry).toBe(5);
    expect(session.signers[0].auth_mode).toEqual([2]);
    expect(session.signers[1].face_match).toMatchObject({
      enforce: true,
      match_threshold: 92.5,
      max_attempts: 2,
      liveness_score: null,
      match_score: null,
    });
    expect(session.signers[1]).toMatchObject({ max_retry: 1, reason: 'Witness' });
    expect(session.signers[2]).toMatchObject({
      verify_location: true,
      location_source: 'device',
      enforce_geofence: true,
      latitude: 12.97,
      longitude: 77.59,
      radius: 500,
    });
  });

  it('answers missing fields with missing_fields, naming every one of them', async () => {
    const errors = await refused({}, 400, 'missing_fields');
    expect(errors.map((e) => e.field).sort()).toEqual(['file_id', 'sign_type', 'signers']);
    const nested = await refused(
      sessionBody(fileId, { signers: [{ email: 'x@example.com', elements: [{ x: 1, type: 'signature' }] }] }),
      400,
      'missing_fields',
    );
    expect(nested.map((e) => e.field).sort()).toEqual(
      [
        'signers[0].elements[0].alignment',
        'signers[0].elements[0].page',
        'signers[0].elements[0].y',
        'signers[0].full_name',
      ].sort(),
    );
    expect(await refused(sessionBody(fileId, { signers: [] }), 400, 'missing_fields')).toEqual([
      { field: 'signers', problem: 'required' },
    ]);
  });

  it('requires country_code with mobile and all geofence fields with enforce_geofence', async () => {
    const mobile = await refused(
      sessionBody(fileId, { signers: [signerInput({ mobile: '9876543210' })] }),
      400,
      'missing_fields',
    );
    expect(mobile).toEqual([{ field: 'signers[0].country_code', problem: 'required' }]);
    const geofence = await refused(
      sessionBody(fileId, { signers: [signerInput({ enforce_geofence: true, latitude: 12.9 })] }),
      400,
      'missing_fields',
    );
    expect(geofence.map((e) => e.field)).toEqual(['signers[0].longitude', 'signers[0].radius']);
  });

  it('refuses an unknown, foreign or non-PDF file with invalid_file_id', async () => {
    expect(await refused(sessionBody('file_doesnotexist'), 400, 'invalid_file_id')).toEqual([
      { field: 'file_id', problem: 'no such PDF among your files' },
    ]);
    const foreign = await uploadPdf(app, other.token);
    await refused(sessionBody(foreign), 400, 'invalid_file_id');
    await refused(sessionBody(assetId), 400, 'invalid_file_id');
  });

  it('refuses an unknown sign type, and pfx without pfx_id, with invalid_sign_type', async () => {
    await refused(sessionBody(fileId, { sign_type: 'handwritten' }), 400, 'invalid_sign_type');
    const pfx = await refused(sessionBody(fileId, { sign_type: 'pfx' }), 400, 'invalid_sign_type');
    expect(pfx.map((e) => e.field)).toEqual(['signers[0].pfx_id']);
    await refused(sessionBody(fileId, { signers: [signerInput({ sign_type: 'pfx' })] }), 400, 'invalid_sign_type');
    const pfxId = await uploadTestPfx(app, owner.token);
    const ok = await initializeEsign(
      app,
      owner.token,
      sessionBody(fileId, { sign_type: 'pfx', signers: [signerInput({ pfx_id: pfxId })] }),
    );
    expect(ok.status).toBe(200);
    expect((ok.body.data as any).signers[0].pfx_id).toBe(pfxId);
  });

  it('accepts only the caller’s own, undeleted PFX certificates', async () => {
    const theirs = await uploadTestPfx(app, other.token);
    const pfxSigner = (pfx_id: string) => sessionBody(fileId, { sign_type: 'pfx', signers: [signerInput({ pfx_id })] });
    expect(await refused(pfxSigner(theirs), 400, 'bad_request')).toEqual([
      { field: 'signers[0].pfx_id', problem: 'no such PFX among yours (POST /api/v1/pfx/upload)' },
    ]);
    await refused(pfxSigner('pfx_unknown'), 400, 'bad_request');
    const mine = await uploadTestPfx(app, owner.token);
    const deleted = await fetch(new URL('/graphql', app.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ query: `mutation { deletePfx(pfx_id: "${mine}") { pfx_id } }` }),
    });
    expect(((await deleted.json()) as any).data.deletePfx.pfx_id).toBe(mine);
    await refused(pfxSigner(mine), 400, 'bad_request');
  });

  it.each([
    ['expiry_seconds below 3600', { expiry_seconds: 3599 }, 'expiry_seconds'],
    ['expiry_seconds above 30 days', { expiry_seconds: 2_592_001 }, 'expiry_seconds'],
    ['an unknown backend', { backend: 'nsdl' }, 'backend'],
    ['an unknown auth_mode', { auth_mode: 3 }, 'auth_mode'],
    ['a relative redirect_url', { redirect_url: '/done' }, 'redirect_url'],
    ['a javascript: redirect_url', { redirect_url: 'javascript:alert(1)' }, 'redirect_url'],
    [
      'face_match_threshold under 50',
      { signers: [signerInput({ face_match_threshold: 49 })] },
      'signers[0].face_match_threshold',
    ],
    [
      'face_match_threshold over 100',
      { signers: [signerInput({ face_match_threshold: 101 })] },
      'signers[0].face_match_threshold',
    ],
    ['face_max_attempts 0', { signers: [signerInput({ face_max_attempts: 0 })] }, 'signers[0].face_max_attempts'],
    ['face_max_attempts 11', { signers: [signerInput({ face_max_attempts: 11 })] }, 'signers[0].face_max_attempts'],
    [
      'an element page past the last page',
      { signers: [signerInput({ elements: [signatureAt(4)] })] },
      'signers[0].elements[0].page',
    ],
    [
      'an element type that does not exist',
      { signers: [signerInput({ elements: [{ ...signatureAt(), type: 'stamp' }] })] },
      'signers[0].elements[0].type',
    ],
    [
      'elements without a signature among them',
      { signers: [signerInput({ elements: [{ ...signatureAt(), type: 'image', value: 'file_x' }] })] },
      'signers[0].elements',
    ],
    ['an invalid email', { signers: [signerInput({ email: 'not-an-email' })] }, 'signers[0].email'],
    [
      'a latitude out of range',
      { signers: [signerInput({ enforce_geofence: true, latitude: 95, longitude: 10, radius: 10 })] },
      'signers[0].latitude',
    ],
    [
      'an unknown face reference asset',
      { signers: [signerInput({ face_ref_file_id: 'file_nope' })] },
      'signers[0].face_ref_file_id',
    ],
  ])('refuses %s with bad_request naming the field', async (_name, overrides, field) => {
    const errors = await refused(sessionBody(fileId, overrides), 400, 'bad_request');
    expect(errors.map((e) => e.field)).toContain(field);
  });

  it('accepts an image element only when its value is one of the user’s assets', async () => {
    const foreignAsset = await uploadAsset(app, other.token);
    const image = (value: string) => ({ x: 10, y: 10, page: 0, type: 'image', alignment: 'center', value });
    const errors = await refused(
      sessionBody(fileId, { signers: [signerInput({ elements: [signatureAt(), image(foreignAsset)] })] }),
      400,
      'bad_request',
    );
    expect(errors).toEqual([
      { field: 'signers[0].elements[1].value', problem: 'must be the client_id of one of your uploaded assets' },
    ]);
    await refused(
      sessionBody(fileId, { signers: [signerInput({ elements: [signatureAt(), image(fileId)] })] }),
      400,
      'bad_request',
    );
    const ok = await initializeEsign(
      app,
      owner.token,
      sessionBody(fileId, { signers: [signerInput({ elements: [signatureAt(), image(assetId)] })] }),
    );
    expect(ok.status).toBe(200);
  });

  it('allows a signer without elements (an invisible signature) and ignores name_match for non-Aadhaar signers', async () => {
    const response = await initializeEsign(
      app,
      owner.token,
      sessionBody(fileId, { signers: [signerInput({ elements: [], name_match: true })] }),
    );
    expect(response.status).toBe(200);
    const signer = (response.body.data as any).signers[0];
    expect(signer.elements).toEqual([]);
    expect(signer.positions).toEqual({});
    expect(signer.name_match.status).toBe('skipped');
  });

  it('refuses malformed JSON, non-object bodies and values of the wrong type with bad_request', async () => {
    const malformed = await rest(app, 'POST', '/esign/initialize-esign', {
      token: owner.token,
      rawBody: '{"sign_type": "suresign",',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({
      data: null,
      status_code: 400,
      message: 'bad_request',
      success: false,
      errors: [{ field: 'body', problem: 'malformed JSON' }],
    });
    const array = await rest(app, 'POST', '/esign/initialize-esign', { token: owner.token, rawBody: '[1,2]' });
    expect(array.status).toBe(400);
    expect(array.body.message).toBe('bad_request');
    const wrongType = await initializeEsign(
      app,
      owner.token,
      sessionBody(fileId, { signers: [signerInput({ elements: [{ ...signatureAt(), page: 'one' }] })] }),
    );
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toBe('bad_request');
    const tooBig = await rest(app, 'POST', '/esign/initialize-esign', {
      token: owner.token,
      rawBody: JSON.stringify({ sender: 'x'.repeat(2_000_000) }),
    });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.message).toBe('payload_too_large');
  });

  it('creates nothing when it refuses', async () => {
    const count = async () =>
      Number((await app.services.orm.em.fork().getConnection().execute('select count(*)::int as n from esign_sessions'))[0].n);
    const before = await count();
    await refused(sessionBody(fileId, { expiry_seconds: 1 }), 400, 'bad_request');
    await refused(sessionBody(fileId, { signers: [signerInput(), signerInput({ full_name: '' })] }), 400, 'missing_fields');
    expect(await count()).toBe(before);
  });

  it('works the same over GraphQL, with codes in extensions', async () => {
    const created = await gql(app, owner.token, InitializeEsignDocument, {
      sign_type: 'aadhaar',
      file_id: fileId,
      folder: 'gql',
      signers: [
        {
          full_name: 'Meera',
          email: 'meera@example.com',
          elements: [{ x: 5, y: 5, page: 2, type: 'signature', alignment: 'right' }],
        },
      ],
    });
    expect(created.errors).toBeUndefined();
    const session = created.data!.initializeEsign;
    expect(session).toMatchObject({ sign_type: 'aadhaar', folder: 'gql', status: 'pending', signer_idx: 0 });
    expect(session.signers[0].positions).toEqual({ '2': [{ x: 5, y: 5 }] });

    const read = await gql(app, owner.token, EsignSessionDocument, { client_id: session.client_id });
    expect(read.data!.esignSession.signers[0].token).toBe(session.signers[0].token);

    const missing = await gql(app, owner.token, InitializeEsignDocument, { file_id: fileId, signers: [] });
    expect(missing.errors?.[0]).toMatchObject({ message: 'missing_fields', extensions: { code: 'missing_fields', status: 400 } });
    const badFile = await gql(app, owner.token, InitializeEsignDocument, {
      sign_type: 'suresign',
      file_id: 'file_x',
      signers: [{ full_name: 'A' }],
    });
    expect(badFile.errors?.[0].extensions).toMatchObject({
      code: 'invalid_file_id',
      errors: [{ field: 'file_id', problem: 'no such PDF among your files' }],
    });
  });
});
