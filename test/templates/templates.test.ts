import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DeleteTemplateDocument,
  SaveTemplateDocument,
  TemplateDocument,
  TemplateNestedDocument,
  TemplatesDocument,
  TemplatesNestedDocument,
  UpdateTemplateDocument,
  type TemplateSignerInput,
} from '../__generated__/graphql';
import { startTestApp, statementsDuring, type TestApp, type TestUser } from '../helpers/app';
import { gql, rest, type RestResponse } from '../helpers/clients';
import { FOUR_PAGE_PDF, signatureAt, uploadAsset, uploadPdf } from '../helpers/factories';
import { MINIMAL_PDF } from '../helpers/fixtures';

/** Template reads and writes: templates/save, update, details, list, delete, over REST and GraphQL. */

/** What a signature or image element answers for the rules only fields have. */
const NO_FIELD_RULES = {
  required: null,
  read_only: null,
  label: null,
  min_length: null,
  max_length: null,
  pattern: null,
  min: null,
  max: null,
  options: null,
  multiline: null,
  every_page: null,
  filled_at: null,
};

const TEMPLATE_KEYS = ['client_id', 'created_at', 'documents', 'file_id', 'folder', 'name', 'signers', 'updated_at', 'version'];
const TEMPLATE_SIGNER_KEYS = [
  'accept_virtual_sign',
  'auth_mode',
  'elements',
  'enforce_geofence',
  'language',
  'latitude',
  'location_source',
  'longitude',
  'max_retry',
  'pfx_id',
  'radius',
  'reason',
  'sign_type',
  'verify_email',
  'verify_location',
  'verify_mobile',
];
const NO_DEFAULTS = {
  sign_type: null,
  auth_mode: null,
  max_retry: null,
  pfx_id: null,
  reason: null,
  verify_email: null,
  verify_mobile: null,
  accept_virtual_sign: null,
  verify_location: null,
  location_source: null,
  language: null,
  enforce_geofence: null,
  latitude: null,
  longitude: null,
  radius: null,
};
const ROUTES = [
  { method: 'POST', path: '/templates/save' },
  { method: 'PUT', path: '/templates/update' },
  { method: 'GET', path: '/templates/details' },
  { method: 'GET', path: '/templates/list' },
  { method: 'DELETE', path: '/templates/delete' },
  { method: 'POST', path: '/esign/initialize-from-template' },
] as const;

const imageAt = (page: number, value?: string) => ({ x: 300, y: 100, page, type: 'image', alignment: 'center', value });
const fieldIdsOf = (template: any): string[] => template.signers.flatMap((s: any) => s.elements.map((e: any) => e.field_id));

describe('templates', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let fileId: string;
  let assetId: string;
  let foreignFileId: string;
  let foreignAssetId: string;

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];
  const countRows = async (table: 'templates' | 'esign_sessions') =>
    Number((await sql<{ n: number }>(`select count(*)::int as n from ${table}`))[0].n);
  const storedTemplate = async (clientId: string) =>
    (await sql<any>('select id, name, file_id, folder, version, signers, deleted_at from templates where id = ?', [clientId]))[0];

  const save = (body: Record<string, unknown>, token = owner.token) =>
    rest<any>(app, 'POST', '/templates/save', { token, json: body });
  const update = (body: Record<string, unknown>, token = owner.token) =>
    rest<any>(app, 'PUT', '/templates/update', { token, json: body });
  const details = (clientId: string, token = owner.token) =>
    rest<any>(app, 'GET', '/templates/details', { token, query: { client_id: clientId } });
  const list = (query: Record<string, string | number>, token = owner.token) =>
    rest<any>(app, 'GET', '/templates/list', { token, query });
  const remove = (clientId: string, token = owner.token) =>
    rest<any>(app, 'DELETE', '/templates/delete', { token, query: { client_id: clientId } });
  const fromTemplate = (body: Record<string, unknown>, token = owner.token) =>
    rest<any>(app, 'POST', '/esign/initialize-from-template', { token, json: body });

  const templateBody = (overrides: Record<string, unknown> = {}) => ({
    name: 'Mutual NDA',
    file_id: fileId,
    signers: [{ elements: [signatureAt(0)] }],
    ...overrides,
  });
  async function saved(overrides: Record<string, unknown> = {}, token = owner.token): Promise<any> {
    const response = await save(templateBody(overrides), token);
    if (response.status !== 200) throw new Error(`save failed: ${JSON.stringify(response.body)}`);
    return response.body.data;
  }
  function expectRefused(response: RestResponse<any>, status: number, message: string) {
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(response.body).toMatchObject({ data: null, status_code: status, message, success: false });
    return (response.body.errors ?? []).map((error) => error.field);
  }

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    other = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
    assetId = await uploadAsset(app, owner.token);
    foreignFileId = await uploadPdf(app, other.token);
    foreignAssetId = await uploadAsset(app, other.token);
  });
  afterAll(async () => app.close());

  describe('POST /api/v1/templates/save', () => {
    it('returns the template: version 1, the defaults as given and null where not, a distinct field_id on every element', async () => {
      const before = await countRows('templates');
      const response = await save({
        name: '  Lease agreement  ',
        file_id: fileId,
        folder: 'leases',
        signers: [
          {
            sign_type: 'aadhaar',
            auth_mode: 2,
            max_retry: 5,
            reason: 'Tenant',
            verify_email: true,
            verify_mobile: false,
            accept_virtual_sign: true,
            verify_location: true,
            location_source: 'ip',
            enforce_geofence: true,
            latitude: 12.97,
            longitude: 77.59,
            radius: 500,
            elements: [
              signatureAt(0, 72, 600),
              { ...imageAt(3, assetId), width: 80, height: 40 },
              { ...signatureAt(3, 200, 700), allow_wet_signature: true, font_size: 12, format: 'dd/mm/yyyy' },
            ],
          },
          { elements: [signatureAt(1)] },
          { sign_type: 'pfx', pfx_id: 'pfx_company_seal', elements: [signatureAt(2), imageAt(2)] },
        ],
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toMatchObject({ status_code: 200, message: 'Success', success: true });
      const template = response.body.data;
      expect(Object.keys(template).sort()).toEqual(TEMPLATE_KEYS);
      expect(template.client_id).toMatch(/^template_[0-9a-f]{32}$/);
      expect(template).toMatchObject({ name: 'Lease agreement', file_id: fileId, folder: 'leases', version: 1 });
      expect(template.signers).toHaveLength(3);
      for (const signer of template.signers) expect(Object.keys(signer).sort()).toEqual(TEMPLATE_SIGNER_KEYS);

      const [tenant, witness, company] = template.signers;
      expect(tenant).toMatchObject({
        sign_type: 'aadhaar',
        auth_mode: [2],
        max_retry: 5,
        pfx_id: null,
        reason: 'Tenant',
        verify_email: true,
        verify_mobile: false,
        accept_virtual_sign: true,
        verify_location: true,
        location_source: 'ip',
        enforce_geofence: true,
        latitude: 12.97,
        longitude: 77.59,
        radius: 500,
      });
      expect(tenant.elements).toEqual([
        {
          field_id: expect.stringMatching(/^field_[0-9a-f]{32}$/),
          x: 72,
          y: 600,
          page: 0,
          type: 'signature',
          alignment: 'left',
          width: 160,
          height: 50,
          allow_wet_signature: false,
          font_size: 10,
          format: null,
          value: null,
          ...NO_FIELD_RULES,
        },
        {
          field_id: expect.stringMatching(/^field_/),
          x: 300,
          y: 100,
          page: 3,
          type: 'image',
          alignment: 'center',
          width: 80,
          height: 40,
          allow_wet_signature: false,
          font_size: 10,
          format: null,
          value: assetId,
          ...NO_FIELD_RULES,
        },
        {
          field_id: expect.stringMatching(/^field_/),
          x: 200,
          y: 700,
          page: 3,
          type: 'signature',
          alignment: 'left',
          width: 160,
          height: 50,
          allow_wet_signature: true,
          font_size: 12,
          format: 'dd/mm/yyyy',
          value: null,
          ...NO_FIELD_RULES,
        },
      ]);
      expect(witness).toEqual({ ...NO_DEFAULTS, elements: [expect.objectContaining({ page: 1, type: 'signature' })] });
      expect(company).toMatchObject({ ...NO_DEFAULTS, sign_type: 'pfx', pfx_id: 'pfx_company_seal' });
      // An image may be saved without a value: it is given at runtime through element_values.
      expect(company.elements[1]).toMatchObject({ type: 'image', value: null, width: 100, height: 100 });

      const ids = fieldIdsOf(template);
      expect(ids).toHaveLength(6);
      expect(ids.every((id) => /^field_[0-9a-f]{32}$/.test(id))).toBe(true);
      expect(new Set(ids).size).toBe(6);

      expect(await countRows('templates')).toBe(before + 1);
      const row = await storedTemplate(template.client_id);
      expect(row).toMatchObject({ name: 'Lease agreement', file_id: fileId, folder: 'leases', version: 1, deleted_at: null });
      expect(row.signers.flatMap((s: any) => s.elements.map((e: any) => e.field_id))).toEqual(ids);
      // The details read shows what save answered.
      expect((await details(template.client_id)).body.data).toEqual(template);
    });

    it('gives different field ids to two templates saved from the same body', async () => {
      const first = await saved();
      const second = await saved();
      expect(first.client_id).not.toBe(second.client_id);
      expect(fieldIdsOf(first)[0]).not.toBe(fieldIdsOf(second)[0]);
      expect(first.folder).toBeNull();
    });

    const validationCases: [string, Record<string, unknown>, string][] = [
      ['a missing name', { name: undefined }, 'name'],
      ['a blank name', { name: '   ' }, 'name'],
      ['a name over 200 characters', { name: 'n'.repeat(201) }, 'name'],
      ['a missing file_id', { file_id: undefined }, 'file_id'],
      ['missing signers', { signers: undefined }, 'signers'],
      ['empty signers', { signers: [] }, 'signers'],
      ['a signer without a signature element', { signers: [{ elements: [imageAt(0, 'file_x')] }] }, 'signers[0].elements'],
      ['a signer with no elements', { signers: [{ elements: [signatureAt()] }, {}] }, 'signers[1].elements'],
      ['a signer with an empty element list', { signers: [{ elements: [] }] }, 'signers[0].elements'],
      ...(['x', 'y', 'page', 'alignment', 'type'] as const).map((key): [string, Record<string, unknown>, string] => {
        const element: Record<string, unknown> = signatureAt();
        delete element[key];
        // Without a type the signer also lacks a signature: a second element keeps that rule out of the way.
        return [
          `an element missing ${key}`,
          { signers: [{ elements: [signatureAt(), element] }] },
          `signers[0].elements[1].${key}`,
        ];
      }),
      ['a page past the last page (4 pages: 0..3)', { signers: [{ elements: [signatureAt(4)] }] }, 'signers[0].elements[0].page'],
      ['a negative page', { signers: [{ elements: [signatureAt(-1)] }] }, 'signers[0].elements[0].page'],
      [
        'an unknown element type',
        { signers: [{ elements: [signatureAt(), { ...signatureAt(), type: 'hologram' }] }] },
        'signers[0].elements[1].type',
      ],
      [
        'an unknown alignment',
        { signers: [{ elements: [{ ...signatureAt(), alignment: 'justify' }] }] },
        'signers[0].elements[0].alignment',
      ],
      ['x off the page', { signers: [{ elements: [signatureAt(0, 20000, 10)] }] }, 'signers[0].elements[0].x'],
      [
        'an incomplete geofence',
        { signers: [{ enforce_geofence: true, latitude: 12.9, elements: [signatureAt()] }] },
        'signers[0].longitude',
      ],
      ['a latitude out of range', { signers: [{ latitude: 91, elements: [signatureAt()] }] }, 'signers[0].latitude'],
      ['an invalid sign_type', { signers: [{ sign_type: 'wet_ink', elements: [signatureAt()] }] }, 'signers[0].sign_type'],
      ['pfx without pfx_id', { signers: [{ sign_type: 'pfx', elements: [signatureAt()] }] }, 'signers[0].pfx_id'],
      [
        'a pfx_id without the pfx_ prefix',
        { signers: [{ sign_type: 'pfx', pfx_id: 'seal', elements: [signatureAt()] }] },
        'signers[0].pfx_id',
      ],
      ['an invalid auth_mode', { signers: [{ auth_mode: 3, elements: [signatureAt()] }] }, 'signers[0].auth_mode'],
      ['max_retry out of range', { signers: [{ max_retry: 11, elements: [signatureAt()] }] }, 'signers[0].max_retry'],
      [
        'an invalid location_source',
        { signers: [{ location_source: 'gps', elements: [signatureAt()] }] },
        'signers[0].location_source',
      ],
    ];

    it.each(validationCases)(
      'refuses %s with 400 bad_request naming the field; nothing is stored',
      async (_label, overrides, field) => {
        const before = await countRows('templates');
        const fields = expectRefused(await save(templateBody(overrides)), 400, 'bad_request');
        expect(fields).toContain(field);
        expect(await countRows('templates')).toBe(before);
      },
    );

    it('names every incomplete geofence field', async () => {
      const fields = expectRefused(
        await save(templateBody({ signers: [{ enforce_geofence: true, latitude: 12.9, elements: [signatureAt()] }] })),
        400,
        'bad_request',
      );
      expect(fields.sort()).toEqual(['signers[0].longitude', 'signers[0].radius']);
    });

    it('names every signer problem of a request at once', async () => {
      const fields = expectRefused(
        await save({
          name: 'Many problems',
          file_id: fileId,
          signers: [{ elements: [{ type: 'signature' }] }, { sign_type: 'wet_ink', elements: [signatureAt(9)] }],
        }),
        400,
        'bad_request',
      );
      expect(fields.sort()).toEqual(
        [
          'signers[0].elements[0].alignment',
          'signers[0].elements[0].page',
          'signers[0].elements[0].x',
          'signers[0].elements[0].y',
          'signers[1].elements[0].page',
          'signers[1].sign_type',
        ].sort(),
      );
    });

    it.each(['name_match', 'face_ref_file_id', 'face_match_threshold', 'face_max_attempts', 'notification'])(
      'refuses the runtime-only option %s in a template, naming signers[0].<option>',
      async (option) => {
        const value = (
          {
            name_match: true,
            face_ref_file_id: assetId,
            face_match_threshold: 80,
            face_max_attempts: 3,
            notification: { invite: true },
          } as Record<string, unknown>
        )[option];
        const before = await countRows('templates');
        const response = await save(templateBody({ signers: [{ [option]: value, elements: [signatureAt()] }] }));
        expect(expectRefused(response, 400, 'bad_request')).toEqual([`signers[0].${option}`]);
        expect(response.body.errors![0].problem).toContain('runtime-only');
        expect(await countRows('templates')).toBe(before);
        // On update too.
        const template = await saved();
        const updated = await update({
          client_id: template.client_id,
          signers: [{ [option]: value, elements: [signatureAt()] }],
        });
        expect(expectRefused(updated, 400, 'bad_request')).toEqual([`signers[0].${option}`]);
      },
    );

    it('refuses an element value that is not one of your assets', async () => {
      for (const value of [foreignAssetId, fileId, 'file_doesnotexist', 'https://example.com/logo.png']) {
        const before = await countRows('templates');
        const fields = expectRefused(
          await save(templateBody({ signers: [{ elements: [signatureAt(), imageAt(0, value)] }] })),
          400,
          'bad_request',
        );
        expect(fields).toEqual(['signers[0].elements[1].value']);
        expect(await countRows('templates')).toBe(before);
      }
    });

    it('answers an unknown, foreign or non-PDF file_id with 404 not_found; nothing is stored', async () => {
      const before = await countRows('templates');
      for (const file of ['file_doesnotexist', foreignFileId, assetId]) {
        const fields = expectRefused(await save(templateBody({ file_id: file })), 404, 'not_found');
        expect(fields).toEqual(['file_id']);
      }
      expect(await countRows('templates')).toBe(before);
    });

    it('refuses a body of the wrong shape with bad_request', async () => {
      const before = await countRows('templates');
      expectRefused(await save(templateBody({ signers: 'everyone' })), 400, 'bad_request');
      expectRefused(
        await save(templateBody({ signers: [{ elements: [{ ...signatureAt(), page: 'one' }] }] })),
        400,
        'bad_request',
      );
      expectRefused(await rest(app, 'POST', '/templates/save', { token: owner.token, rawBody: '{"name": ' }), 400, 'bad_request');
      expect(await countRows('templates')).toBe(before);
    });
  });

  describe('PUT /api/v1/templates/update', () => {
    it('with signers replaces the blueprint and regenerates every field_id; version goes up each time', async () => {
      const template = await saved({
        folder: 'hr',
        signers: [
          { reason: 'Employee', elements: [signatureAt(0), imageAt(1, assetId)] },
          { reason: 'Manager', elements: [signatureAt(1)] },
        ],
      });
      const oldIds = fieldIdsOf(template);

      const replaced = await update({
        client_id: template.client_id,
        signers: [{ sign_type: 'suresign', elements: [signatureAt(0), signatureAt(2, 10, 20), imageAt(3, assetId)] }],
      });
      expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
      const v2 = replaced.body.data;
      expect(v2).toMatchObject({ client_id: template.client_id, name: 'Mutual NDA', folder: 'hr', file_id: fileId, version: 2 });
      expect(v2.signers).toHaveLength(1);
      expect(v2.signers[0]).toMatchObject({ ...NO_DEFAULTS, sign_type: 'suresign' });
      // Even the element at the very same place gets a new id.
      expect(v2.signers[0].elements[0]).toMatchObject({ x: 72, y: 600, page: 0, type: 'signature' });
      const newIds = fieldIdsOf(v2);
      expect(newIds).toHaveLength(3);
      expect(new Set(newIds).size).toBe(3);
      expect(newIds.every((id) => /^field_[0-9a-f]{32}$/.test(id))).toBe(true);
      expect(newIds.filter((id) => oldIds.includes(id))).toEqual([]);
      expect(new Date(v2.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(template.updated_at).getTime());
      expect(v2.created_at).toBe(template.created_at);

      const renamed = await update({ client_id: template.client_id, name: 'NDA v2', folder: 'legal' });
      expect(renamed.status).toBe(200);
      const v3 = renamed.body.data;
      expect(v3).toMatchObject({ name: 'NDA v2', folder: 'legal', version: 3 });
      expect(fieldIdsOf(v3)).toEqual(newIds);
      expect(v3.signers).toEqual(v2.signers);

      // Only the version moves when nothing else is given.
      const touched = await update({ client_id: template.client_id });
      expect(touched.body.data).toMatchObject({ name: 'NDA v2', folder: 'legal', version: 4 });
      expect(fieldIdsOf(touched.body.data)).toEqual(newIds);

      const row = await storedTemplate(template.client_id);
      expect(row).toMatchObject({ name: 'NDA v2', folder: 'legal', version: 4 });
      expect(row.signers.flatMap((s: any) => s.elements.map((e: any) => e.field_id))).toEqual(newIds);
      expect((await details(template.client_id)).body.data).toEqual(touched.body.data);
    });

    it('concurrent updates each get a version of their own', async () => {
      const template = await saved();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => update({ client_id: template.client_id, name: `Concurrent ${i}` })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
      expect(answers.map((answer) => answer.body.data.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      const row = await storedTemplate(template.client_id);
      expect(row.version).toBe(11);
      // The stored name is the one written by the update that answered version 11.
      expect(row.name).toBe(answers.find((answer) => answer.body.data.version === 11)!.body.data.name);
    });

    it('changes the file, keeping the signers when they fit it', async () => {
      const otherPdf = await uploadPdf(app, owner.token, FOUR_PAGE_PDF, 'other.pdf');
      const template = await saved({ signers: [{ elements: [signatureAt(3)] }] });
      const response = await update({ client_id: template.client_id, file_id: otherPdf });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ file_id: otherPdf, version: 2 });
      expect(fieldIdsOf(response.body.data)).toEqual(fieldIdsOf(template));
    });

    it('refuses a new file the saved elements do not fit (page 3 of a 1-page PDF) with bad_request; nothing changes', async () => {
      const onePage = await uploadPdf(app, owner.token, MINIMAL_PDF, 'one-page.pdf');
      const template = await saved({ signers: [{ elements: [signatureAt(0), signatureAt(3)] }] });
      const response = await update({ client_id: template.client_id, file_id: onePage, name: 'Renamed' });
      expect(expectRefused(response, 400, 'bad_request')).toEqual(['signers[0].elements[1].page']);
      const row = await storedTemplate(template.client_id);
      expect(row).toMatchObject({ file_id: fileId, name: 'Mutual NDA', version: 1 });

      // With new signers that fit, the same file change is accepted.
      const fitted = await update({ client_id: template.client_id, file_id: onePage, signers: [{ elements: [signatureAt(0)] }] });
      expect(fitted.status).toBe(200);
      expect(fitted.body.data).toMatchObject({ file_id: onePage, version: 2 });
      // And new signers are checked against the new file, not the old one.
      const tooFar = await update({ client_id: template.client_id, file_id: onePage, signers: [{ elements: [signatureAt(1)] }] });
      expect(expectRefused(tooFar, 400, 'bad_request')).toEqual(['signers[0].elements[0].page']);
    });

    it('validates new signers like save: bad_request naming the field, nothing changes', async () => {
      const template = await saved();
      const cases: [Record<string, unknown>, string][] = [
        [{ signers: [] }, 'signers'],
        [{ signers: [{ elements: [imageAt(0, assetId)] }] }, 'signers[0].elements'],
        [{ signers: [{ elements: [{ ...signatureAt(), x: undefined }] }] }, 'signers[0].elements[0].x'],
        [{ signers: [{ elements: [signatureAt(4)] }] }, 'signers[0].elements[0].page'],
        [{ signers: [{ enforce_geofence: true, radius: 10, elements: [signatureAt()] }] }, 'signers[0].latitude'],
        [{ signers: [{ sign_type: 'pfx', elements: [signatureAt()] }] }, 'signers[0].pfx_id'],
        [{ name: '' }, 'name'],
        [{ folder: 'f'.repeat(201) }, 'folder'],
      ];
      for (const [body, field] of cases) {
        const response = await update({ client_id: template.client_id, ...body });
        expect(expectRefused(response, 400, 'bad_request'), JSON.stringify(body)).toContain(field);
      }
      const row = await storedTemplate(template.client_id);
      expect(row.version).toBe(1);
      expect(row.signers.flatMap((s: any) => s.elements.map((e: any) => e.field_id))).toEqual(fieldIdsOf(template));
    });

    it('answers an unknown or foreign template, and a foreign or non-PDF file_id, with 404 not_found', async () => {
      const template = await saved();
      const foreign = await saved({ file_id: foreignFileId }, other.token);
      expectRefused(await update({ client_id: 'template_doesnotexist', name: 'x' }), 404, 'not_found');
      expectRefused(await update({ client_id: foreign.client_id, name: 'mine now' }), 404, 'not_found');
      expect(expectRefused(await update({ client_id: template.client_id, file_id: foreignFileId }), 404, 'not_found')).toEqual([
        'file_id',
      ]);
      expectRefused(await update({ client_id: template.client_id, file_id: assetId }), 404, 'not_found');
      expectRefused(await update({ client_id: template.client_id, file_id: 'file_doesnotexist' }), 404, 'not_found');
      expect((await storedTemplate(template.client_id)).version).toBe(1);
      expect(await storedTemplate(foreign.client_id)).toMatchObject({ name: 'Mutual NDA', version: 1 });
      expectRefused(await update({ name: 'no id' }), 400, 'bad_request');
    });
  });

  describe('details, list and delete', () => {
    it('GET details reads a template; REST shows no GraphQL-only nested fields', async () => {
      const template = await saved({ folder: 'reads' });
      const response = await details(template.client_id);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status_code: 200, message: 'Success', success: true });
      expect(response.body.data).toEqual(template);
      expect(response.body.data.file).toBeUndefined();
      expect(response.body.data.sessions).toBeUndefined();
      expectRefused(await details('template_doesnotexist'), 404, 'not_found');
      const missing = await rest<any>(app, 'GET', '/templates/details', { token: owner.token });
      expect(missing.status).toBe(400);
    });

    it('GET list pages newest first with {items, has_next}, filters by folder and refuses bad paging', async () => {
      const user = await app.createUser();
      const pdf = await uploadPdf(app, user.token);
      const made: string[] = [];
      for (let i = 0; i < 5; i++) {
        const response = await save(
          { name: `T${i}`, file_id: pdf, folder: i % 2 === 0 ? 'even' : 'odd', signers: [{ elements: [signatureAt()] }] },
          user.token,
        );
        made.push(response.body.data.client_id);
      }
      // Distinct creation times, oldest first, so that the order asserted below does not depend on timing.
      for (const [index, id] of made.entries()) {
        await sql(`update templates set created_at = now() - make_interval(mins => ?) where id = ?`, [10 - index, id]);
      }
      const page = (query: Record<string, string | number>) => list(query, user.token);

      const first = await page({ page: 1, size: 2 });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ status_code: 200, success: true });
      expect(Object.keys(first.body.data).sort()).toEqual(['has_next', 'items']);
      expect(first.body.data.items.map((item: any) => item.client_id)).toEqual([made[4], made[3]]);
      expect(first.body.data.has_next).toBe(true);
      // Items are whole templates, as in the details read.
      expect(Object.keys(first.body.data.items[0]).sort()).toEqual(TEMPLATE_KEYS);
      const second = await page({ page: 2, size: 2 });
      expect(second.body.data.items.map((item: any) => item.client_id)).toEqual([made[2], made[1]]);
      expect(second.body.data.has_next).toBe(true);
      const third = await page({ page: 3, size: 2 });
      expect(third.body.data.items.map((item: any) => item.client_id)).toEqual([made[0]]);
      expect(third.body.data.has_next).toBe(false);
      const beyond = await page({ page: 4, size: 2 });
      expect(beyond.body.data).toEqual({ items: [], has_next: false });
      const all = await page({ page: 1, size: 5 });
      expect(all.body.data.has_next).toBe(false);
      expect(all.body.data.items).toHaveLength(5);

      const even = await page({ page: 1, size: 10, folder: 'even' });
      expect(even.body.data.items.map((item: any) => item.client_id)).toEqual([made[4], made[2], made[0]]);
      const odd = await page({ page: 1, size: 1, folder: 'odd' });
      expect(odd.body.data).toMatchObject({ has_next: true });
      expect(odd.body.data.items.map((item: any) => item.client_id)).toEqual([made[3]]);
      expect((await page({ page: 1, size: 10, folder: 'none' })).body.data).toEqual({ items: [], has_next: false });

      // Nobody else's templates appear.
      const mine = await list({ page: 1, size: 100 });
      expect(mine.body.data.items.some((item: any) => made.includes(item.client_id))).toBe(false);

      for (const [query, field] of [
        [{ page: 0, size: 10 }, 'page'],
        [{ page: -1, size: 10 }, 'page'],
        [{ page: 1, size: 0 }, 'size'],
        [{ page: 1, size: 101 }, 'size'],
      ] as const) {
        expect(expectRefused(await page(query), 400, 'bad_request')).toEqual([field]);
      }
      expect((await page({ page: 'first', size: 10 })).status).toBe(400);
      expect((await page({ page: 1.5, size: 10 })).status).toBe(400);
      // Left out, page is 1 (issue 15: the added lists default to page 1 of 20).
      expect((await page({ size: 10 })).status).toBe(200);
    });

    it('DELETE hides the template from details, list, update and new sessions; sessions already started still read', async () => {
      const template = await saved({ folder: 'to-delete', signers: [{ reason: 'Approve', elements: [signatureAt(2)] }] });
      const started = await fromTemplate({
        template_id: template.client_id,
        sign_type: 'suresign',
        signers: [{ full_name: 'Asha Rao', email: 'asha@example.com' }],
      });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const session = started.body.data;

      const deleted = await remove(template.client_id);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toMatchObject({ status_code: 200, message: 'Success', success: true });
      expect(deleted.body.data.client_id).toBe(template.client_id);
      expect(Number.isNaN(new Date(deleted.body.data.deleted_at).getTime())).toBe(false);

      expectRefused(await details(template.client_id), 404, 'not_found');
      const listed = await list({ page: 1, size: 100 });
      expect(listed.body.data.items.map((item: any) => item.client_id)).not.toContain(template.client_id);
      expect((await list({ page: 1, size: 100, folder: 'to-delete' })).body.data.items).toEqual([]);
      expectRefused(await update({ client_id: template.client_id, name: 'back' }), 404, 'not_found');
      expectRefused(await remove(template.client_id), 404, 'not_found');
      const before = await countRows('esign_sessions');
      expectRefused(
        await fromTemplate({
          template_id: template.client_id,
          sign_type: 'suresign',
          signers: [{ full_name: 'Asha Rao', email: 'asha@example.com' }],
        }),
        404,
        'not_found',
      );
      expect(await countRows('esign_sessions')).toBe(before);

      const read = await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: session.client_id } });
      expect(read.status).toBe(200);
      expect(read.body.data).toMatchObject({
        client_id: session.client_id,
        status: 'pending',
        template_id: template.client_id,
        template_version: 1,
      });
      expect(read.body.data.signers[0].elements).toEqual(session.signers[0].elements);
      expect(read.body.data.signers[0].elements[0].field_id).toBe(fieldIdsOf(template)[0]);
      const cancelled = await rest<any>(app, 'POST', '/esign/cancel', {
        token: owner.token,
        json: { client_id: session.client_id },
      });
      expect(cancelled.status).toBe(200);

      expectRefused(await rest(app, 'DELETE', '/templates/delete', { token: owner.token }), 400, 'bad_request');
    });

    it("answers another user's template with 404 not_found on details, update, delete and initialize-from-template", async () => {
      const foreign = await saved({ file_id: foreignFileId, signers: [{ reason: 'r', elements: [signatureAt()] }] }, other.token);
      expectRefused(await details(foreign.client_id), 404, 'not_found');
      expectRefused(await update({ client_id: foreign.client_id, folder: 'x' }), 404, 'not_found');
      expectRefused(await remove(foreign.client_id), 404, 'not_found');
      expectRefused(
        await fromTemplate({
          template_id: foreign.client_id,
          sign_type: 'suresign',
          signers: [{ full_name: 'Asha Rao', email: 'asha@example.com' }],
        }),
        404,
        'not_found',
      );
      const row = await storedTemplate(foreign.client_id);
      expect(row).toMatchObject({ version: 1, folder: null, deleted_at: null });
      // The owner still sees it.
      expect((await details(foreign.client_id, other.token)).status).toBe(200);
    });
  });

  describe('authentication', () => {
    const refused: [string, () => Record<string, string>][] = [
      ['no Authorization header', () => ({})],
      ['an unknown token', () => ({ authorization: 'Bearer esk_not-a-real-token' })],
      ['a malformed header', () => ({ authorization: `Basic ${owner.token}` })],
      ['a bare token', () => ({ authorization: owner.token })],
    ];
    for (const route of ROUTES) {
      it.each(refused)(`${route.method} ${route.path} answers %s with 401 unauthorized`, async (_label, headers) => {
        const before = await countRows('templates');
        const url = new URL(`/api/v1${route.path}`, app.url);
        if (route.method === 'GET' || route.method === 'DELETE') url.searchParams.set('client_id', 'template_x');
        if (route.path === '/templates/list') {
          url.searchParams.set('page', '1');
          url.searchParams.set('size', '10');
        }
        const body = route.method === 'POST' || route.method === 'PUT' ? JSON.stringify(templateBody()) : undefined;
        const response = await fetch(url, {
          method: route.method,
          headers: { ...headers(), ...(body ? { 'content-type': 'application/json' } : {}) },
          body,
        });
        expect(response.status).toBe(401);
        expect(await response.json()).toEqual({ data: null, status_code: 401, message: 'unauthorized', success: false });
        expect(await countRows('templates')).toBe(before);
      });
    }

    it('GraphQL template operations without a valid token are 401 unauthorized', async () => {
      const answer = await gql(app, null, TemplatesDocument, { page: 1, size: 10 });
      expect(answer.status).toBe(401);
      expect(answer.errors?.[0]?.extensions?.code).toBe('unauthorized');
      const saveAnswer = await gql(app, 'esk_not-a-real-token', SaveTemplateDocument, {
        name: 'x',
        file_id: fileId,
        signers: [],
      });
      expect(saveAnswer.status).toBe(401);
      expect(saveAnswer.errors?.[0]?.extensions?.code).toBe('unauthorized');
    });
  });

  describe('GraphQL', () => {
    const blueprint = (overrides: Partial<TemplateSignerInput> = {}): TemplateSignerInput => ({
      elements: [{ x: 72, y: 600, page: 0, type: 'signature', alignment: 'left' }],
      ...overrides,
    });

    it('saveTemplate, template, updateTemplate, templates and deleteTemplate behave like REST', async () => {
      const user = await app.createUser();
      const pdf = await uploadPdf(app, user.token);
      const savedAnswer = await gql(app, user.token, SaveTemplateDocument, {
        name: 'GraphQL NDA',
        file_id: pdf,
        folder: 'gql',
        signers: [blueprint({ sign_type: 'aadhaar', auth_mode: 1, reason: 'Sign here' }), blueprint()],
      });
      expect(savedAnswer.errors).toBeUndefined();
      const template = savedAnswer.data!.saveTemplate;
      expect(template).toMatchObject({ name: 'GraphQL NDA', file_id: pdf, folder: 'gql', version: 1 });
      expect(template.client_id).toMatch(/^template_/);
      expect(template.signers[0]).toMatchObject({ sign_type: 'aadhaar', auth_mode: [1], reason: 'Sign here', max_retry: null });
      expect(template.signers[1]).toMatchObject(NO_DEFAULTS);
      const ids = fieldIdsOf(template);
      expect(new Set(ids).size).toBe(2);

      // The same template reads the same on both faces.
      const viaRest = await details(template.client_id, user.token);
      expect(viaRest.body.data).toEqual(template);
      const read = await gql(app, user.token, TemplateDocument, { client_id: template.client_id });
      expect(read.data!.template).toEqual(template);

      const kept = await gql(app, user.token, UpdateTemplateDocument, { client_id: template.client_id, name: 'Renamed' });
      expect(kept.errors).toBeUndefined();
      expect(kept.data!.updateTemplate).toMatchObject({ name: 'Renamed', version: 2 });
      expect(fieldIdsOf(kept.data!.updateTemplate)).toEqual(ids);
      const replaced = await gql(app, user.token, UpdateTemplateDocument, {
        client_id: template.client_id,
        signers: [blueprint(), blueprint()],
      });
      expect(replaced.data!.updateTemplate.version).toBe(3);
      expect(fieldIdsOf(replaced.data!.updateTemplate).filter((id) => ids.includes(id))).toEqual([]);

      const listed = await gql(app, user.token, TemplatesDocument, { page: 1, size: 10, folder: 'gql' });
      expect(listed.data!.templates).toEqual({
        items: [{ client_id: template.client_id, name: 'Renamed', folder: 'gql', version: 3 }],
        has_next: false,
      });

      const deleted = await gql(app, user.token, DeleteTemplateDocument, { client_id: template.client_id });
      expect(deleted.errors).toBeUndefined();
      expect(deleted.data!.deleteTemplate.client_id).toBe(template.client_id);
      const gone = await gql(app, user.token, TemplateDocument, { client_id: template.client_id });
      expect(gone.errors?.[0]?.extensions?.code).toBe('not_found');
      expect((await gql(app, user.token, TemplatesDocument, { page: 1, size: 10 })).data!.templates.items).toEqual([]);
    });

    it('answers errors with the REST codes in extensions.code, and extensions.errors naming the fields', async () => {
      const invalid = await gql(app, owner.token, SaveTemplateDocument, {
        name: 'x',
        file_id: fileId,
        signers: [blueprint({ name_match: true }), { elements: [{ x: 1, y: 1, page: 7, type: 'image', alignment: 'left' }] }],
      });
      expect(invalid.data).toBeNull();
      expect(invalid.errors?.[0]?.extensions?.code).toBe('bad_request');
      expect((invalid.errors?.[0]?.extensions?.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(
        ['signers[0].name_match', 'signers[1].elements', 'signers[1].elements[0].page'].sort(),
      );
      const missing = await gql(app, owner.token, SaveTemplateDocument, { file_id: fileId, signers: [blueprint()] });
      expect(missing.errors?.[0]?.extensions?.code).toBe('bad_request');
      const foreignFile = await gql(app, owner.token, SaveTemplateDocument, {
        name: 'x',
        file_id: foreignFileId,
        signers: [blueprint()],
      });
      expect(foreignFile.errors?.[0]?.extensions?.code).toBe('not_found');

      const foreign = await saved({ file_id: foreignFileId }, other.token);
      for (const answer of [
        await gql(app, owner.token, TemplateDocument, { client_id: foreign.client_id }),
        await gql(app, owner.token, UpdateTemplateDocument, { client_id: foreign.client_id, name: 'mine' }),
        await gql(app, owner.token, DeleteTemplateDocument, { client_id: foreign.client_id }),
        await gql(app, owner.token, UpdateTemplateDocument, { client_id: 'template_nope', name: 'x' }),
      ]) {
        expect(answer.errors?.[0]?.extensions?.code).toBe('not_found');
      }
      const mine = await saved({ signers: [{ elements: [signatureAt(3)] }] });
      const onePage = await uploadPdf(app, owner.token, MINIMAL_PDF, 'one.pdf');
      const misfit = await gql(app, owner.token, UpdateTemplateDocument, { client_id: mine.client_id, file_id: onePage });
      expect(misfit.errors?.[0]?.extensions?.code).toBe('bad_request');
      const badPage = await gql(app, owner.token, TemplatesDocument, { page: 0, size: 10 });
      expect(badPage.errors?.[0]?.extensions?.code).toBe('bad_request');
    });

    it('nested reads: template -> file -> page_count, signers -> elements -> asset, sessions newest first', async () => {
      const template = await saved({
        signers: [{ reason: 'Approve', elements: [signatureAt(0), imageAt(3, assetId)] }],
      });
      const sessionIds: string[] = [];
      for (let i = 0; i < 3; i++) {
        const started = await fromTemplate({
          template_id: template.client_id,
          sign_type: 'suresign',
          signers: [{ full_name: `Signer ${i}`, email: `s${i}@example.com` }],
        });
        expect(started.status, JSON.stringify(started.body)).toBe(200);
        sessionIds.push(started.body.data.client_id);
      }
      // Sessions not from this template never appear under it.
      await rest(app, 'POST', '/esign/initialize-esign', {
        token: owner.token,
        json: { sign_type: 'suresign', file_id: fileId, signers: [{ full_name: 'A', email: 'a@example.com' }] },
      });
      for (const [index, id] of sessionIds.entries()) {
        await sql(`update esign_sessions set created_at = now() - make_interval(mins => ?) where id = ?`, [10 - index, id]);
      }
      const read = await gql(app, owner.token, TemplateNestedDocument, { client_id: template.client_id });
      expect(read.errors).toBeUndefined();
      const nested = read.data!.template;
      expect(nested.file).toEqual({ client_id: fileId, page_count: 4 });
      expect(nested.signers[0].elements.map((e) => e.asset?.client_id ?? null)).toEqual([null, assetId]);
      expect(nested.signers[0].elements[1].asset?.mime).toBe('image/png');
      expect(nested.sessions.map((s) => s.client_id)).toEqual([...sessionIds].reverse());
      expect(nested.sessions.every((s) => s.template_id === template.client_id && s.template_version === 1)).toBe(true);

      const fresh = await saved();
      const empty = await gql(app, owner.token, TemplateNestedDocument, { client_id: fresh.client_id });
      expect(empty.data!.template.sessions).toEqual([]);
    });

    it('batches nested reads: a page of 20 templates with 2 sessions each costs as many SQL statements as a page of 1', async () => {
      const user = await app.createUser();
      const pdf = await uploadPdf(app, user.token);
      const asset = await uploadAsset(app, user.token);
      for (let i = 0; i < 20; i++) {
        const response = await save(
          {
            name: `Batch ${i}`,
            file_id: pdf,
            signers: [
              { reason: 'First', elements: [signatureAt(0), imageAt(1, asset)] },
              { reason: 'Second', elements: [signatureAt(2), imageAt(3, asset)] },
            ],
          },
          user.token,
        );
        expect(response.status).toBe(200);
        for (let s = 0; s < 2; s++) {
          const started = await fromTemplate(
            {
              template_id: response.body.data.client_id,
              sign_type: 'suresign',
              signers: [
                { full_name: 'A', email: 'a@example.com' },
                { full_name: 'B', email: 'b@example.com' },
              ],
            },
            user.token,
          );
          expect(started.status).toBe(200);
        }
      }
      const countStatements = async (size: number) => {
        return statementsDuring(app, async () => {
          const result = await gql(app, user.token, TemplatesNestedDocument, { page: 1, size });
          expect(result.errors).toBeUndefined();
          const items = result.data!.templates.items;
          expect(items).toHaveLength(size);
          for (const item of items) {
            expect(item.file).toEqual({ client_id: pdf, page_count: 4 });
            expect(item.signers).toHaveLength(2);
            expect(item.signers[1].elements[1].asset?.client_id).toBe(asset);
            expect(item.sessions).toHaveLength(2);
            expect(item.sessions[0].source_file.client_id).toBe(pdf);
            expect(item.sessions[0].signers).toHaveLength(2);
            expect(item.sessions[0].signers[0].elements[1].asset?.client_id).toBe(asset);
          }
        });
      };
      const one = await countStatements(1);
      const twenty = await countStatements(20);
      expect(twenty).toBe(one);
    });
  });
});
