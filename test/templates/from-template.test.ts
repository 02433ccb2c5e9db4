import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadTestPfx } from '../helpers/pfx';
import { InitializeFromTemplateDocument, TemplateNestedDocument } from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql, rest, type RestResponse } from '../helpers/clients';
import { signatureAt, uploadAsset, uploadPdf } from '../helpers/factories';

/** POST /api/v1/esign/initialize-from-template: the contract's five rules, field by field, on both faces. */

const imageAt = (page: number, value?: string) => ({ x: 300, y: 100, page, type: 'image', alignment: 'center', value });
const asha = { full_name: 'Asha Rao', email: 'asha@example.com' };
const vikram = { full_name: 'Vikram Singh', mobile: '9876543210', country_code: '91' };

describe('initialize-from-template', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let fileId: string;
  let assetId: string;
  let secondAssetId: string;
  let foreignAssetId: string;

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  const countSessions = async () => Number((await sql<{ n: number }>('select count(*)::int as n from esign_sessions'))[0].n);

  async function saveTemplate(body: Record<string, unknown>, token = owner.token): Promise<any> {
    const response = await rest<any>(app, 'POST', '/templates/save', {
      token,
      json: { name: 'Template', file_id: fileId, ...body },
    });
    if (response.status !== 200) throw new Error(`save failed: ${JSON.stringify(response.body)}`);
    return response.body.data;
  }
  const fromTemplate = (body: Record<string, unknown>, token = owner.token) =>
    rest<any>(app, 'POST', '/esign/initialize-from-template', { token, json: body });
  async function started(body: Record<string, unknown>, token = owner.token): Promise<any> {
    const response = await fromTemplate(body, token);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ status_code: 200, message: 'Success', success: true });
    return response.body.data;
  }
  const sessionDetails = async (clientId: string) => {
    const response = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } });
    expect(response.status).toBe(200);
    return response.body.data;
  };
  /** Refused with the status and code given, and nothing created; answers the fields named. */
  async function refused(body: Record<string, unknown>, status: number, message: string): Promise<string[]> {
    const before = await countSessions();
    const response: RestResponse<any> = await fromTemplate(body);
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(response.body).toMatchObject({ data: null, status_code: status, message, success: false });
    expect(await countSessions()).toBe(before);
    return (response.body.errors ?? []).map((error) => error.field);
  }

  /** Two signers, each with a saved reason, and a signature each. */
  let pair: any;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    other = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
    assetId = await uploadAsset(app, owner.token);
    secondAssetId = await uploadAsset(app, owner.token);
    foreignAssetId = await uploadAsset(app, other.token);
    pair = await saveTemplate({
      signers: [
        { reason: 'Party', elements: [signatureAt(0)] },
        { reason: 'Witness', elements: [signatureAt(1)] },
      ],
    });
  });
  afterAll(async () => app.close());

  describe('rule 1: signer count', () => {
    it.each([
      ['fewer', [asha]],
      ['more', [asha, vikram, asha]],
      ['none', []],
      ['absent', undefined],
    ])('answers %s runtime signers than the template has with 400 signer_count_mismatch', async (_label, signers) => {
      const fields = await refused({ template_id: pair.client_id, sign_type: 'suresign', signers }, 400, 'signer_count_mismatch');
      expect(fields).toEqual(['signers']);
    });

    it('checks the count before anything else', async () => {
      // Invalid signers and session options would be bad_request; the count mismatch is answered first.
      await refused(
        { template_id: pair.client_id, sign_type: 'nope', expiry_seconds: 1, signers: [{ email: 'not-an-email' }] },
        400,
        'signer_count_mismatch',
      );
    });
  });

  describe('the template and its reference', () => {
    it('answers a missing template_id with 400 bad_request and an unknown one with 404 not_found', async () => {
      expect(await refused({ sign_type: 'suresign', signers: [asha, vikram] }, 400, 'bad_request')).toEqual(['template_id']);
      expect(await refused({ template_id: '', sign_type: 'suresign', signers: [asha, vikram] }, 400, 'bad_request')).toEqual([
        'template_id',
      ]);
      await refused({ template_id: 'template_doesnotexist', sign_type: 'suresign', signers: [asha, vikram] }, 404, 'not_found');
    });

    it('creates a pending session that records the template and its version, with the template field ids', async () => {
      const session = await started({ template_id: pair.client_id, sign_type: 'suresign', signers: [asha, vikram] });
      expect(session.client_id).toMatch(/^esign_/);
      expect(session).toMatchObject({
        status: 'pending',
        file_id: fileId,
        current_pdf_file_id: fileId,
        sign_type: 'suresign',
        template_id: pair.client_id,
        template_version: 1,
        signer_idx: 0,
      });
      expect(session.signers.map((s: any) => s.elements.map((e: any) => e.field_id))).toEqual(
        pair.signers.map((s: any) => s.elements.map((e: any) => e.field_id)),
      );
      expect(session.signers[0]).toMatchObject({ ...asha, reason: 'Party', eligible: true, status: 'pending' });
      expect(session.signers[1]).toMatchObject({ ...vikram, reason: 'Witness', eligible: false });
      expect(session.signers[0].invite_url).toBe(`${app.url}/sign/${session.signers[0].token}`);
      expect(session.signers[1].positions).toEqual({ '1': [{ x: 72, y: 600 }] });
      // The details read shows the same.
      expect(await sessionDetails(session.client_id)).toEqual(session);
      const row = (
        await sql<any>('select template_id, template_version from esign_sessions where id = ?', [session.client_id])
      )[0];
      expect(row).toEqual({ template_id: pair.client_id, template_version: 1 });
    });
  });

  describe('rule 2: template defaults merged with runtime input, runtime first', () => {
    // For each field: what the template saves, what the runtime gives, and how the session signer reads each way.
    const cases: {
      field: string;
      saved: Record<string, unknown>;
      given: Record<string, unknown>;
      fromTemplate: Record<string, unknown>;
      fromRuntime: Record<string, unknown>;
    }[] = [
      {
        field: 'sign_type',
        saved: { sign_type: 'aadhaar' },
        given: { sign_type: 'pfx', pfx_id: 'pfx_runtime' },
        fromTemplate: { sign_type: 'aadhaar', pfx_id: null },
        fromRuntime: { sign_type: 'pfx', pfx_id: 'pfx_runtime' },
      },
      {
        field: 'pfx_id',
        saved: { sign_type: 'pfx', pfx_id: 'pfx_saved' },
        given: { pfx_id: 'pfx_given' },
        fromTemplate: { sign_type: 'pfx', pfx_id: 'pfx_saved' },
        fromRuntime: { sign_type: 'pfx', pfx_id: 'pfx_given' },
      },
      {
        field: 'auth_mode',
        saved: { auth_mode: 2 },
        given: { auth_mode: 1 },
        fromTemplate: { auth_mode: [2] },
        fromRuntime: { auth_mode: [1] },
      },
      {
        field: 'max_retry',
        saved: { max_retry: 7 },
        given: { max_retry: 2 },
        fromTemplate: { max_retry: 7 },
        fromRuntime: { max_retry: 2 },
      },
      {
        field: 'reason',
        saved: { reason: 'Saved reason' },
        given: { reason: 'Given reason' },
        fromTemplate: { reason: 'Saved reason' },
        fromRuntime: { reason: 'Given reason' },
      },
      {
        field: 'verify_email',
        saved: { verify_email: true },
        given: { verify_email: false },
        fromTemplate: { verify_email: true },
        fromRuntime: { verify_email: false },
      },
      {
        field: 'verify_mobile',
        saved: { verify_mobile: true },
        given: { verify_mobile: false },
        fromTemplate: { verify_mobile: true },
        fromRuntime: { verify_mobile: false },
      },
      {
        field: 'accept_virtual_sign',
        saved: { accept_virtual_sign: true },
        given: { accept_virtual_sign: false },
        fromTemplate: { accept_virtual_sign: true },
        fromRuntime: { accept_virtual_sign: false },
      },
      {
        field: 'verify_location',
        saved: { verify_location: true },
        given: { verify_location: false },
        fromTemplate: { verify_location: true, location_source: 'device' },
        fromRuntime: { verify_location: false, location_source: null },
      },
      {
        field: 'location_source',
        saved: { verify_location: true, location_source: 'ip' },
        given: { location_source: 'device' },
        fromTemplate: { verify_location: true, location_source: 'ip' },
        fromRuntime: { verify_location: true, location_source: 'device' },
      },
      {
        field: 'enforce_geofence, latitude, longitude, radius',
        saved: { enforce_geofence: true, latitude: 12.97, longitude: 77.59, radius: 500 },
        given: { enforce_geofence: true, latitude: -33.86, longitude: 151.21, radius: 50 },
        fromTemplate: { enforce_geofence: true, latitude: 12.97, longitude: 77.59, radius: 500 },
        fromRuntime: { enforce_geofence: true, latitude: -33.86, longitude: 151.21, radius: 50 },
      },
      {
        field: 'enforce_geofence turned off at runtime',
        saved: { enforce_geofence: true, latitude: 12.97, longitude: 77.59, radius: 500 },
        given: { enforce_geofence: false },
        fromTemplate: { enforce_geofence: true },
        fromRuntime: { enforce_geofence: false },
      },
      {
        field: 'latitude alone at runtime (the rest stays the template’s)',
        saved: { enforce_geofence: true, latitude: 12.97, longitude: 77.59, radius: 500 },
        given: { latitude: 13.5 },
        fromTemplate: { latitude: 12.97, longitude: 77.59, radius: 500 },
        fromRuntime: { enforce_geofence: true, latitude: 13.5, longitude: 77.59, radius: 500 },
      },
    ];

    /** The cases name PFX certificates by role; each role is a real certificate of the owner's. */
    const realPfx: Record<string, string> = {};
    const withRealPfx = (record: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(record).map(([key, value]) => [
          key,
          typeof value === 'string' && value in realPfx ? realPfx[value] : value,
        ]),
      );
    beforeAll(async () => {
      for (const role of ['pfx_runtime', 'pfx_saved', 'pfx_given']) realPfx[role] = await uploadTestPfx(app, owner.token);
    });

    for (const c of cases) {
      describe(c.field, () => {
        let template: any;
        // The runtime signer can satisfy every verification: it has an email and a mobile.
        const runtime = { full_name: 'Asha Rao', email: 'asha@example.com', mobile: '9876543210', country_code: '91' };
        beforeAll(async () => {
          template = await saveTemplate({ signers: [{ reason: 'Base', ...withRealPfx(c.saved), elements: [signatureAt()] }] });
        });

        it('the template default applies when the runtime gives none', async () => {
          const session = await started({ template_id: template.client_id, sign_type: 'suresign', signers: [runtime] });
          expect(session.signers[0]).toMatchObject(withRealPfx(c.fromTemplate));
        });

        it('the runtime value beats the template default', async () => {
          const session = await started({
            template_id: template.client_id,
            sign_type: 'suresign',
            signers: [{ ...runtime, ...withRealPfx(c.given) }],
          });
          expect(session.signers[0]).toMatchObject(withRealPfx(c.fromRuntime));
          // Stored as answered.
          expect((await sessionDetails(session.client_id)).signers[0]).toMatchObject(withRealPfx(c.fromRuntime));
        });
      });
    }

    it('a blank runtime string counts as absent: the template value applies', async () => {
      const template = await saveTemplate({
        signers: [
          {
            sign_type: 'aadhaar',
            reason: 'Saved reason',
            verify_location: true,
            location_source: 'ip',
            elements: [signatureAt()],
          },
        ],
      });
      const session = await started({
        template_id: template.client_id,
        sign_type: 'suresign',
        signers: [{ ...asha, reason: '  ', sign_type: '', location_source: '' }],
      });
      expect(session.signers[0]).toMatchObject({ reason: 'Saved reason', sign_type: 'aadhaar', location_source: 'ip' });

      // At the session level too: a blank folder or sign type leaves the template's.
      const foldered = await saveTemplate({
        folder: 'saved-folder',
        signers: [{ sign_type: 'aadhaar', reason: 'r', elements: [signatureAt()] }],
      });
      const blank = await started({ template_id: foldered.client_id, sign_type: ' ', folder: '', signers: [asha] });
      expect(blank).toMatchObject({ folder: 'saved-folder', sign_type: 'aadhaar' });
    });

    it('without any default, a signer gets the session’s (and the documented defaults)', async () => {
      const template = await saveTemplate({ signers: [{ elements: [signatureAt()] }] });
      const session = await started({
        template_id: template.client_id,
        sign_type: 'suresign',
        auth_mode: 2,
        max_retry: 4,
        signers: [{ ...asha, reason: 'Given' }],
      });
      expect(session.signers[0]).toMatchObject({
        sign_type: 'suresign',
        auth_mode: [2],
        max_retry: 4,
        pfx_id: null,
        reason: 'Given',
        verify_email: false,
        verify_mobile: false,
        accept_virtual_sign: false,
        verify_location: false,
        location_source: null,
        enforce_geofence: false,
        latitude: null,
        longitude: null,
        radius: null,
      });
    });

    it('a saved signer sign type beats the session-level one; without a session-level one the first saved signer’s stands', async () => {
      const template = await saveTemplate({
        signers: [
          { sign_type: 'aadhaar', reason: 'A', elements: [signatureAt()] },
          { reason: 'B', elements: [signatureAt(1)] },
        ],
      });
      const withSession = await started({ template_id: template.client_id, sign_type: 'suresign', signers: [asha, vikram] });
      expect(withSession.sign_type).toBe('suresign');
      expect(withSession.signers.map((s: any) => s.sign_type)).toEqual(['aadhaar', 'suresign']);
      const without = await started({ template_id: template.client_id, signers: [asha, vikram] });
      expect(without.sign_type).toBe('aadhaar');
      expect(without.signers.map((s: any) => s.sign_type)).toEqual(['aadhaar', 'aadhaar']);

      // No sign type anywhere: the merged request lacks one, refused as bad_request.
      const bare = await saveTemplate({ signers: [{ reason: 'A', elements: [signatureAt()] }] });
      expect(await refused({ template_id: bare.client_id, signers: [asha] }, 400, 'bad_request')).toEqual(['sign_type']);
    });

    it('session-level options apply to the created session; the template folder is used when the runtime gives none', async () => {
      const template = await saveTemplate({
        folder: 'templates/hr',
        signers: [{ reason: 'Employee', elements: [signatureAt()] }],
      });
      const session = await started({
        template_id: template.client_id,
        sign_type: 'suresign',
        max_retry: 6,
        allow_download: false,
        redirect_url: 'https://example.com/after?x=1',
        backend: 'sandbox',
        expiry_seconds: 7200,
        sender: 'HR desk',
        email_template_overrides: { company_name: 'Acme', legal_name: 'Acme Pvt Ltd', support_email: 'help@acme.example' },
        signers: [asha],
      });
      expect(session).toMatchObject({
        max_retry: 6,
        allow_download: false,
        redirect_url: 'https://example.com/after?x=1',
        backend: 'sandbox',
        expiry_seconds: 7200,
        sender: 'HR desk',
        folder: 'templates/hr',
        email_template_overrides: { company_name: 'Acme', legal_name: 'Acme Pvt Ltd', support_email: 'help@acme.example' },
      });
      expect(new Date(session.expires_at).getTime() - new Date(session.created_at).getTime()).toBe(7200 * 1000);
      // The signer inherits the session's max_retry where neither the template nor the runtime sets one.
      expect(session.signers[0].max_retry).toBe(6);
      expect(await sessionDetails(session.client_id)).toMatchObject({
        folder: 'templates/hr',
        allow_download: false,
        max_retry: 6,
      });
      const row = (
        await sql<any>(
          'select folder, allow_download, max_retry, redirect_url, expiry_seconds from esign_sessions where id = ?',
          [session.client_id],
        )
      )[0];
      expect(row).toMatchObject({ folder: 'templates/hr', allow_download: false, max_retry: 6, expiry_seconds: 7200 });

      const ownFolder = await started({
        template_id: template.client_id,
        sign_type: 'suresign',
        folder: 'runtime',
        signers: [asha],
      });
      expect(ownFolder.folder).toBe('runtime');
      // Without options: the documented defaults.
      const plain = await started({ template_id: template.client_id, sign_type: 'suresign', signers: [asha] });
      expect(plain).toMatchObject({
        max_retry: 3,
        allow_download: true,
        redirect_url: null,
        backend: 'sandbox',
        expiry_seconds: 604800,
        email_template_overrides: null,
      });
    });

    it('refuses invalid session-level options with bad_request', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ max_retry: 11 }, 'max_retry'],
        [{ expiry_seconds: 60 }, 'expiry_seconds'],
        [{ redirect_url: 'ftp://example.com' }, 'redirect_url'],
        [{ backend: 'docusign' }, 'backend'],
        [{ auth_mode: 3 }, 'auth_mode'],
        [{ sign_type: 'wet_ink' }, 'sign_type'],
        [{ email_template_overrides: { support_email: 'nope' } }, 'email_template_overrides.support_email'],
        [{ stamp: { amount: '100' } }, 'stamp.state_code'],
      ];
      for (const [options, field] of cases) {
        const fields = await refused(
          { template_id: pair.client_id, sign_type: 'suresign', signers: [asha, vikram], ...options },
          400,
          'bad_request',
        );
        expect(fields, JSON.stringify(options)).toContain(field);
      }
    });
  });

  describe('validation after the merge is initialize-esign’s, answered as bad_request', () => {
    let single: any;
    beforeAll(async () => {
      single = await saveTemplate({ signers: [{ reason: 'Sign', elements: [signatureAt()] }] });
    });
    const attempt = (signer: Record<string, unknown>, options: Record<string, unknown> = {}) =>
      refused({ template_id: single.client_id, sign_type: 'suresign', signers: [signer], ...options }, 400, 'bad_request');

    it('a merged pfx signer without pfx_id (runtime sign type, or the session’s)', async () => {
      expect(await attempt({ ...asha, sign_type: 'pfx' })).toEqual(['signers[0].pfx_id']);
      expect(await attempt(asha, { sign_type: 'pfx' })).toEqual(['signers[0].pfx_id']);
      expect(await attempt({ ...asha, sign_type: 'pfx', pfx_id: 'nope' })).toEqual(['signers[0].pfx_id']);
    });

    it('an invalid runtime sign type', async () => {
      expect(await attempt({ ...asha, sign_type: 'wet_ink' })).toEqual(['signers[0].sign_type']);
    });

    it('a bad email or mobile', async () => {
      expect(await attempt({ ...asha, email: 'not-an-email' })).toEqual(['signers[0].email']);
      expect(await attempt({ ...vikram, mobile: '12' })).toEqual(['signers[0].mobile']);
    });

    it('a runtime mobile without country_code (bad_request, not missing_fields)', async () => {
      expect(await attempt({ full_name: 'Vikram Singh', mobile: '9876543210' })).toEqual(['signers[0].country_code']);
    });

    it('a missing full_name', async () => {
      expect(await attempt({ email: 'asha@example.com' })).toEqual(['signers[0].full_name']);
    });

    it('verify_email without an email, and verify_mobile without a mobile, whichever side set them', async () => {
      expect(await attempt({ ...vikram, verify_email: true })).toEqual(['signers[0].email']);
      const saved = await saveTemplate({ signers: [{ reason: 'x', verify_mobile: true, elements: [signatureAt()] }] });
      expect(await refused({ template_id: saved.client_id, sign_type: 'suresign', signers: [asha] }, 400, 'bad_request')).toEqual(
        ['signers[0].mobile'],
      );
    });

    it('an incomplete geofence after the merge', async () => {
      expect(await attempt({ ...asha, enforce_geofence: true, latitude: 1 })).toEqual([
        'signers[0].longitude',
        'signers[0].radius',
      ]);
    });

    it('face match: a threshold of 30, too many attempts, or a reference that is not your asset', async () => {
      expect(await attempt({ ...asha, face_ref_file_id: assetId, face_match_threshold: 30 })).toEqual([
        'signers[0].face_match_threshold',
      ]);
      expect(await attempt({ ...asha, face_ref_file_id: assetId, face_max_attempts: 11 })).toEqual([
        'signers[0].face_max_attempts',
      ]);
      expect(await attempt({ ...asha, face_ref_file_id: foreignAssetId })).toEqual(['signers[0].face_ref_file_id']);
      expect(await attempt({ ...asha, face_ref_file_id: fileId })).toEqual(['signers[0].face_ref_file_id']);
    });

    it('runtime-only options are accepted at runtime: face match and notification flags', async () => {
      const session = await started({
        template_id: single.client_id,
        sign_type: 'suresign',
        signers: [
          { ...asha, face_ref_file_id: assetId, face_match_threshold: 90, face_max_attempts: 2, notification: { invite: true } },
        ],
      });
      expect(session.signers[0].face_match).toMatchObject({
        enforce: true,
        ref_file_id: assetId,
        match_threshold: 90,
        max_attempts: 2,
      });
      expect(session.signers[0].notification).toEqual({ invite: true, completion: false, whatsapp: false });
    });

    it('lists every problem of every signer at once', async () => {
      const fields = await refused(
        {
          template_id: pair.client_id,
          sign_type: 'suresign',
          signers: [{ full_name: 'A', mobile: '9876543210' }, { email: 'bad' }],
        },
        400,
        'bad_request',
      );
      expect(fields.sort()).toEqual(['signers[0].country_code', 'signers[1].email', 'signers[1].full_name'].sort());
    });
  });

  describe('rule 3: email or mobile per signer; reason unless saved', () => {
    it('refuses a signer with neither email nor mobile, naming signers[i].email', async () => {
      expect(
        await refused(
          { template_id: pair.client_id, sign_type: 'suresign', signers: [asha, { full_name: 'Nobody' }] },
          400,
          'bad_request',
        ),
      ).toEqual(['signers[1].email']);
      expect(
        await refused(
          {
            template_id: pair.client_id,
            sign_type: 'suresign',
            signers: [
              { full_name: 'A', email: ' ' },
              { full_name: 'B', mobile: '' },
            ],
          },
          400,
          'bad_request',
        ),
      ).toEqual(['signers[0].email', 'signers[1].email']);
    });

    it('accepts email only or mobile only', async () => {
      const session = await started({ template_id: pair.client_id, sign_type: 'suresign', signers: [asha, vikram] });
      expect(session.signers[0]).toMatchObject({ email: 'asha@example.com', mobile: null, country_code: null });
      expect(session.signers[1]).toMatchObject({ email: null, mobile: '9876543210', country_code: '91' });
    });

    it('requires a reason unless the template saved one', async () => {
      const noReason = await saveTemplate({
        signers: [{ elements: [signatureAt()] }, { reason: 'Saved', elements: [signatureAt(1)] }],
      });
      expect(
        await refused({ template_id: noReason.client_id, sign_type: 'suresign', signers: [asha, vikram] }, 400, 'bad_request'),
      ).toEqual(['signers[0].reason']);
      expect(
        await refused(
          { template_id: noReason.client_id, sign_type: 'suresign', signers: [{ ...asha, reason: '  ' }, vikram] },
          400,
          'bad_request',
        ),
      ).toEqual(['signers[0].reason']);
      const session = await started({
        template_id: noReason.client_id,
        sign_type: 'suresign',
        signers: [{ ...asha, reason: 'Given' }, vikram],
      });
      expect(session.signers.map((s: any) => s.reason)).toEqual(['Given', 'Saved']);
    });
  });

  describe('rule 4: element_values change only the value', () => {
    let template: any;
    let sigId: string;
    let imageId: string;
    let emptyImageId: string;
    let otherSignerFieldId: string;
    beforeAll(async () => {
      template = await saveTemplate({
        signers: [
          {
            reason: 'Sign',
            elements: [
              { ...signatureAt(2, 100, 200), width: 120, height: 40 },
              { ...imageAt(3, assetId), width: 80, height: 60 },
              { ...imageAt(1), x: 10, y: 20 },
            ],
          },
          { reason: 'Witness', elements: [signatureAt(0)] },
        ],
      });
      [sigId, imageId, emptyImageId] = template.signers[0].elements.map((e: any) => e.field_id);
      otherSignerFieldId = template.signers[1].elements[0].field_id;
    });

    it('sets values by field_id; position, type, size and field ids stay the template’s', async () => {
      const session = await started({
        template_id: template.client_id,
        sign_type: 'suresign',
        signers: [{ ...asha, element_values: { [imageId]: secondAssetId, [emptyImageId]: assetId, [sigId]: 'Asha R.' } }, vikram],
      });
      const saved = template.signers[0].elements;
      const elements = session.signers[0].elements;
      expect(elements.map((e: any) => e.value)).toEqual(['Asha R.', secondAssetId, assetId]);
      elements.forEach((element: any, index: number) => {
        const { value: _sessionValue, ...placement } = element;
        const { value: _savedValue, ...savedPlacement } = saved[index];
        expect(placement).toEqual(savedPlacement);
      });
      expect(elements[0]).toMatchObject({ field_id: sigId, x: 100, y: 200, page: 2, type: 'signature', width: 120, height: 40 });
      expect(elements[1]).toMatchObject({ field_id: imageId, x: 300, y: 100, page: 3, type: 'image', alignment: 'center' });
      expect(session.signers[1].elements.map((e: any) => e.field_id)).toEqual([otherSignerFieldId]);
      // The template itself is untouched.
      const read = await rest<any>(app, 'GET', '/templates/details', {
        token: owner.token,
        query: { client_id: template.client_id },
      });
      expect(read.body.data).toEqual(template);
    });

    it('a saved image value applies when element_values gives none; an image without any value is refused', async () => {
      const withValue = await started({
        template_id: template.client_id,
        sign_type: 'suresign',
        signers: [{ ...asha, element_values: { [emptyImageId]: assetId } }, vikram],
      });
      expect(withValue.signers[0].elements[1].value).toBe(assetId);
      const fields = await refused(
        { template_id: template.client_id, sign_type: 'suresign', signers: [asha, vikram] },
        400,
        'bad_request',
      );
      expect(fields).toEqual(['signers[0].elements[2].value']);
    });

    it('refuses a field_id that is not one of that signer’s template elements', async () => {
      for (const fieldId of [otherSignerFieldId, 'field_doesnotexist', 'x']) {
        const fields = await refused(
          {
            template_id: template.client_id,
            sign_type: 'suresign',
            signers: [{ ...asha, element_values: { [emptyImageId]: assetId, [fieldId]: assetId } }, vikram],
          },
          400,
          'bad_request',
        );
        expect(fields).toEqual([`signers[0].element_values.${fieldId}`]);
      }
    });

    it('refuses an image value that is not one of your assets', async () => {
      for (const value of [foreignAssetId, fileId, 'file_doesnotexist', 'https://example.com/x.png']) {
        const fields = await refused(
          {
            template_id: template.client_id,
            sign_type: 'suresign',
            signers: [{ ...asha, element_values: { [emptyImageId]: assetId, [imageId]: value } }, vikram],
          },
          400,
          'bad_request',
        );
        expect(fields, value).toEqual(['signers[0].elements[1].value']);
      }
    });

    it('refuses a value that is not a string', async () => {
      for (const value of [42, true, { file: assetId }, [assetId]]) {
        const fields = await refused(
          {
            template_id: template.client_id,
            sign_type: 'suresign',
            signers: [{ ...asha, element_values: { [emptyImageId]: assetId, [imageId]: value } }, vikram],
          },
          400,
          'bad_request',
        );
        expect(fields, JSON.stringify(value)).toContain(`signers[0].element_values.${imageId}`);
      }
    });

    it('refuses element_values that is not an object', async () => {
      await refused(
        { template_id: template.client_id, sign_type: 'suresign', signers: [{ ...asha, element_values: 'everything' }, vikram] },
        400,
        'bad_request',
      );
    });

    it('refuses runtime elements: placements come from the template', async () => {
      const fields = await refused(
        {
          template_id: template.client_id,
          sign_type: 'suresign',
          signers: [{ ...asha, element_values: { [emptyImageId]: assetId }, elements: [signatureAt(3, 1, 1)] }, vikram],
        },
        400,
        'bad_request',
      );
      expect(fields).toEqual(['signers[0].elements']);
      await refused(
        {
          template_id: template.client_id,
          sign_type: 'suresign',
          signers: [{ ...asha, element_values: { [emptyImageId]: assetId }, elements: [] }, vikram],
        },
        400,
        'bad_request',
      );
    });
  });

  describe('rule 5: a signature value naming an asset survives only with allow_wet_signature', () => {
    let template: any;
    let plainSaved: string;
    let wetSaved: string;
    let plainEmpty: string;
    let wetEmpty: string;
    beforeAll(async () => {
      template = await saveTemplate({
        signers: [
          {
            reason: 'Sign',
            elements: [
              { ...signatureAt(0, 10, 10), value: assetId },
              { ...signatureAt(0, 200, 10), value: assetId, allow_wet_signature: true },
              signatureAt(1, 10, 10),
              { ...signatureAt(1, 200, 10), allow_wet_signature: true },
            ],
          },
        ],
      });
      [plainSaved, wetSaved, plainEmpty, wetEmpty] = template.signers[0].elements.map((e: any) => e.field_id);
      expect(template.signers[0].elements.map((e: any) => e.value)).toEqual([assetId, assetId, null, null]);
    });

    it('an asset saved in the template: stripped without allow_wet_signature, kept with it', async () => {
      const session = await started({ template_id: template.client_id, sign_type: 'suresign', signers: [asha] });
      expect(session.signers[0].elements.map((e: any) => [e.field_id, e.allow_wet_signature, e.value])).toEqual([
        [plainSaved, false, null],
        [wetSaved, true, assetId],
        [plainEmpty, false, null],
        [wetEmpty, true, null],
      ]);
      expect((await sessionDetails(session.client_id)).signers[0].elements.map((e: any) => e.value)).toEqual([
        null,
        assetId,
        null,
        null,
      ]);
    });

    it('an asset given through element_values: stripped without allow_wet_signature, kept with it', async () => {
      const session = await started({
        template_id: template.client_id,
        sign_type: 'suresign',
        signers: [
          { ...asha, element_values: { [plainEmpty]: secondAssetId, [wetEmpty]: secondAssetId, [wetSaved]: secondAssetId } },
        ],
      });
      expect(session.signers[0].elements.map((e: any) => e.value)).toEqual([null, secondAssetId, null, secondAssetId]);
    });

    it('a text value on a signature element is not an asset and is kept', async () => {
      const session = await started({
        template_id: template.client_id,
        sign_type: 'suresign',
        signers: [{ ...asha, element_values: { [plainEmpty]: 'Asha Rao' } }],
      });
      expect(session.signers[0].elements[2].value).toBe('Asha Rao');
    });

    it('a kept wet signature must still be one of your assets; a stripped one is never looked at', async () => {
      const fields = await refused(
        {
          template_id: template.client_id,
          sign_type: 'suresign',
          signers: [{ ...asha, element_values: { [wetEmpty]: foreignAssetId } }],
        },
        400,
        'bad_request',
      );
      expect(fields).toEqual(['signers[0].elements[3].value']);
      const session = await started({
        template_id: template.client_id,
        sign_type: 'suresign',
        signers: [{ ...asha, element_values: { [plainEmpty]: foreignAssetId } }],
      });
      expect(session.signers[0].elements[2].value).toBeNull();
    });
  });

  describe('name_match', () => {
    it('is honoured for Aadhaar signers and ignored (skipped) for the others', async () => {
      const template = await saveTemplate({
        signers: [
          { sign_type: 'aadhaar', reason: 'A', elements: [signatureAt()] },
          { sign_type: 'suresign', reason: 'B', elements: [signatureAt(1)] },
          { reason: 'C', elements: [signatureAt(2)] },
        ],
      });
      const session = await started({
        template_id: template.client_id,
        sign_type: 'suresign',
        signers: [
          { ...asha, name_match: true },
          { ...vikram, name_match: true },
          // Aadhaar at runtime: name match applies.
          { full_name: 'Meera Iyer', email: 'meera@example.com', sign_type: 'aadhaar', name_match: true },
        ],
      });
      expect(session.signers[0].name_match).toEqual({
        enforce: true,
        prefill_name: 'Asha Rao',
        signer_name: null,
        score: null,
        status: 'pending',
      });
      expect(session.signers[1].name_match).toEqual({
        enforce: false,
        prefill_name: null,
        signer_name: null,
        score: null,
        status: 'skipped',
      });
      expect(session.signers[2].name_match).toMatchObject({ enforce: true, prefill_name: 'Meera Iyer', status: 'pending' });

      const without = await started({ template_id: template.client_id, sign_type: 'suresign', signers: [asha, vikram, asha] });
      expect(without.signers[0].name_match).toMatchObject({ enforce: false, status: 'skipped' });
    });
  });

  describe('versions: sessions keep what they were started from', () => {
    it('records the version; a later update changes neither earlier sessions nor their field ids; new sessions get the new version', async () => {
      const template = await saveTemplate({
        folder: 'v',
        signers: [{ reason: 'v1 reason', sign_type: 'aadhaar', elements: [signatureAt(0, 50, 60), imageAt(1, assetId)] }],
      });
      const first = await started({ template_id: template.client_id, signers: [asha] });
      expect(first).toMatchObject({ template_id: template.client_id, template_version: 1, sign_type: 'aadhaar' });
      const before = await sessionDetails(first.client_id);

      const updated = await rest<any>(app, 'PUT', '/templates/update', {
        token: owner.token,
        json: {
          client_id: template.client_id,
          name: 'v2',
          folder: 'v2',
          signers: [{ reason: 'v2 reason', sign_type: 'suresign', elements: [signatureAt(3, 400, 500)] }],
        },
      });
      expect(updated.status).toBe(200);
      const v2 = updated.body.data;
      expect(v2.version).toBe(2);

      const after = await sessionDetails(first.client_id);
      expect(after).toEqual(before);
      expect(after).toMatchObject({ template_version: 1, folder: 'v', sign_type: 'aadhaar' });
      expect(after.signers[0].elements.map((e: any) => e.field_id)).toEqual(
        template.signers[0].elements.map((e: any) => e.field_id),
      );
      expect(after.signers[0].reason).toBe('v1 reason');

      const second = await started({ template_id: template.client_id, signers: [asha] });
      expect(second).toMatchObject({ template_id: template.client_id, template_version: 2, folder: 'v2', sign_type: 'suresign' });
      expect(second.signers[0].reason).toBe('v2 reason');
      expect(second.signers[0].elements).toEqual([
        expect.objectContaining({ field_id: v2.signers[0].elements[0].field_id, page: 3, x: 400, y: 500, type: 'signature' }),
      ]);
      expect(second.signers[0].positions).toEqual({ '3': [{ x: 400, y: 500 }] });

      // A name-only update is another version too.
      await rest(app, 'PUT', '/templates/update', { token: owner.token, json: { client_id: template.client_id, name: 'v3' } });
      const third = await started({ template_id: template.client_id, signers: [asha] });
      expect(third.template_version).toBe(3);
      expect(third.signers[0].elements[0].field_id).toBe(v2.signers[0].elements[0].field_id);

      const nested = await gql(app, owner.token, TemplateNestedDocument, { client_id: template.client_id });
      expect(nested.data!.template.sessions.map((s) => s.template_version).sort()).toEqual([1, 2, 3]);
    });
  });

  describe('GraphQL initializeFromTemplate', () => {
    it('starts the same session as REST, merged the same way', async () => {
      const template = await saveTemplate({
        signers: [
          { sign_type: 'aadhaar', reason: 'Saved', max_retry: 2, elements: [signatureAt(), imageAt(2)] },
          { reason: 'Witness', elements: [signatureAt(1)] },
        ],
      });
      const imageField = template.signers[0].elements[1].field_id;
      const answer = await gql(app, owner.token, InitializeFromTemplateDocument, {
        template_id: template.client_id,
        sign_type: 'suresign',
        allow_download: false,
        expiry_seconds: 3600,
        redirect_url: 'https://example.com/done',
        backend: 'sandbox',
        email_template_overrides: { company_name: 'Acme' },
        signers: [
          { full_name: 'Asha Rao', email: 'asha@example.com', name_match: true, element_values: { [imageField]: assetId } },
          { full_name: 'Vikram Singh', mobile: '9876543210', country_code: '+91', max_retry: 9, name_match: true },
        ],
      });
      expect(answer.errors).toBeUndefined();
      const session = answer.data!.initializeFromTemplate;
      expect(session).toMatchObject({
        status: 'pending',
        template_id: template.client_id,
        template_version: 1,
        allow_download: false,
        expiry_seconds: 3600,
        redirect_url: 'https://example.com/done',
        email_template_overrides: { company_name: 'Acme', legal_name: null, support_email: null },
      });
      expect(session.signers[0]).toMatchObject({ sign_type: 'aadhaar', reason: 'Saved', max_retry: 2 });
      expect(session.signers[0].name_match.status).toBe('pending');
      expect(session.signers[0].elements.map((e) => [e.field_id, e.value])).toEqual([
        [template.signers[0].elements[0].field_id, null],
        [imageField, assetId],
      ]);
      expect(session.signers[1]).toMatchObject({ sign_type: 'suresign', reason: 'Witness', max_retry: 9, country_code: '91' });
      expect(session.signers[1].name_match.status).toBe('skipped');
      const viaRest = await sessionDetails(session.client_id);
      expect(viaRest.signers[0].elements).toEqual(session.signers[0].elements);
    });

    it('answers with the REST codes in extensions.code', async () => {
      const codeOf = async (variables: Parameters<typeof gql<unknown, any>>[3]) => {
        const answer = await gql(app, owner.token, InitializeFromTemplateDocument, variables);
        expect(answer.data ?? null).toBeNull();
        return {
          code: answer.errors?.[0]?.extensions?.code,
          errors: answer.errors?.[0]?.extensions?.errors as { field: string }[],
        };
      };
      const before = await countSessions();
      expect((await codeOf({ template_id: pair.client_id, sign_type: 'suresign', signers: [asha] })).code).toBe(
        'signer_count_mismatch',
      );
      expect((await codeOf({ sign_type: 'suresign', signers: [asha] })).code).toBe('bad_request');
      expect((await codeOf({ template_id: 'template_nope', signers: [asha] })).code).toBe('not_found');
      const foreign = await saveTemplate(
        { file_id: await uploadPdf(app, other.token), signers: [{ reason: 'x', elements: [signatureAt()] }] },
        other.token,
      );
      expect((await codeOf({ template_id: foreign.client_id, sign_type: 'suresign', signers: [asha] })).code).toBe('not_found');

      const merged = await codeOf({
        template_id: pair.client_id,
        sign_type: 'suresign',
        signers: [{ full_name: 'A', mobile: '9876543210' }, { full_name: 'B' }],
      });
      expect(merged.code).toBe('bad_request');
      // The merge's own rules (email or mobile, reason, element_values) are answered before the session validation runs.
      expect(merged.errors.map((e) => e.field)).toEqual(['signers[1].email']);
      const afterMerge = await codeOf({
        template_id: pair.client_id,
        sign_type: 'suresign',
        signers: [
          { full_name: 'A', mobile: '9876543210' },
          { full_name: 'B', email: 'bad' },
        ],
      });
      expect(afterMerge.code).toBe('bad_request');
      expect(afterMerge.errors.map((e) => e.field).sort()).toEqual(['signers[0].country_code', 'signers[1].email']);

      const values = await codeOf({
        template_id: pair.client_id,
        sign_type: 'suresign',
        signers: [{ ...asha, element_values: { field_nope: 'x', [pair.signers[0].elements[0].field_id]: 7 } }, vikram],
      });
      expect(values.code).toBe('bad_request');
      expect(values.errors.map((e) => e.field).sort()).toEqual(
        ['signers[0].element_values.field_nope', `signers[0].element_values.${pair.signers[0].elements[0].field_id}`].sort(),
      );
      expect(await countSessions()).toBe(before);
    });
  });
});
