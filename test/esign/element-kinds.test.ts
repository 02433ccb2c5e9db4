import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import {
  createSession,
  initializeEsign,
  sessionBody,
  signatureAt,
  signerInput,
  uploadAsset,
  uploadPdf,
} from '../helpers/factories';

/** One element of each kind a signer fills, with its own rules. */
function fieldsOfEveryKind(assetId: string): Record<string, unknown>[] {
  const at = (y: number, rest: Record<string, unknown>) => ({ x: 72, y, page: 0, alignment: 'left', ...rest });
  return [
    signatureAt(0, 72, 700),
    at(40, { type: 'text', label: 'Amount in words', min_length: 3, max_length: 80 }),
    at(70, { type: 'text', label: 'Notes', multiline: true, required: false, height: 60 }),
    at(140, { type: 'number', label: 'Amount', min: 1000, max: 500000, format: 'indian' }),
    at(170, { type: 'date', label: 'Start date', format: 'DD MMM YYYY' }),
    at(200, { type: 'checkbox', label: 'I agree to the terms', required: true }),
    at(220, { type: 'radio', label: 'Repayment', options: ['Monthly', 'Quarterly'] }),
    at(290, { type: 'dropdown', label: 'Branch', options: ['Lucknow', 'Chennai', 'Pune'] }),
    at(320, { type: 'name' }),
    at(350, { type: 'email', required: false }),
    at(380, { type: 'initials', every_page: true, x: 500, y: 760 }),
    at(410, { type: 'date_signed', format: 'DD/MM/YYYY' }),
    at(440, { type: 'text', label: 'PAN', pattern: '[A-Z]{5}[0-9]{4}[A-Z]', max_length: 10 }),
    at(470, { type: 'text', label: 'Loan number', read_only: true, value: 'LN-2026-0042' }),
    at(500, { type: 'seal', label: 'Company seal', required: false }),
    at(600, { type: 'image', value: assetId }),
  ];
}

describe('element kinds', () => {
  let app: TestApp;
  let owner: TestUser;
  let fileId: string;
  let assetId: string;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    fileId = await uploadPdf(app, owner.token);
    assetId = await uploadAsset(app, owner.token);
  });
  afterAll(async () => app.close());

  const sessionCount = async () =>
    Number((await app.services.orm.em.fork().getConnection().execute('select count(*)::int as n from esign_sessions'))[0].n);

  async function refusedWith(elements: Record<string, unknown>[]) {
    const response = await initializeEsign(app, owner.token, sessionBody(fileId, { signers: [signerInput({ elements })] }));
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    return response.body;
  }

  it('plans every kind with its rules; signature and image elements answer as the contract shows them', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, { signers: [signerInput({ elements: fieldsOfEveryKind(assetId) })] }),
    );
    const elements = session.signers[0].elements as Record<string, unknown>[];
    expect(elements.map((element) => element.type)).toEqual([
      'signature',
      'text',
      'text',
      'number',
      'date',
      'checkbox',
      'radio',
      'dropdown',
      'name',
      'email',
      'initials',
      'date_signed',
      'text',
      'text',
      'seal',
      'image',
    ]);
    expect(elements[0]).toMatchObject({ required: null, read_only: null, label: null, options: null });
    expect(elements[1]).toMatchObject({
      label: 'Amount in words',
      required: true,
      read_only: false,
      min_length: 3,
      max_length: 80,
    });
    expect(elements[2]).toMatchObject({ multiline: true, required: false, height: 60 });
    expect(elements[3]).toMatchObject({ min: 1000, max: 500000, format: 'indian', width: 120, height: 20 });
    expect(elements[5]).toMatchObject({ required: true, width: 14, height: 14 });
    expect(elements[6]).toMatchObject({ options: ['Monthly', 'Quarterly'] });
    expect(elements[10]).toMatchObject({ every_page: true });
    // The service fills date_signed: required and read-only for everyone else.
    expect(elements[11]).toMatchObject({ required: true, read_only: true, value: null, filled_at: null });
    expect(elements[13]).toMatchObject({ read_only: true, value: 'LN-2026-0042', filled_at: null });
    expect(elements[15]).toMatchObject({ value: assetId, required: null });
  });

  it.each([
    ['an unknown type', [{ ...signatureAt(), type: 'hologram' }], 'signers[0].elements[0].type'],
    ['a radio group without options', [signatureAt(), { ...signatureAt(), type: 'radio' }], 'signers[0].elements[1].options'],
    [
      'a dropdown with the same choice twice',
      [signatureAt(), { ...signatureAt(), type: 'dropdown', options: ['A', 'A'] }],
      'signers[0].elements[1].options',
    ],
    [
      'a date format not in the list',
      [signatureAt(), { ...signatureAt(), type: 'date', format: 'dd/mm/yy' }],
      'signers[0].elements[1].format',
    ],
    ['min above max', [signatureAt(), { ...signatureAt(), type: 'number', min: 10, max: 1 }], 'signers[0].elements[1].min'],
    [
      'a pattern RE2 cannot compile',
      [signatureAt(), { ...signatureAt(), type: 'text', pattern: '(a)\\1' }],
      'signers[0].elements[1].pattern',
    ],
    [
      'a read-only field without a value',
      [signatureAt(), { ...signatureAt(), type: 'text', read_only: true }],
      'signers[0].elements[1].value',
    ],
    [
      'a value for date_signed',
      [signatureAt(), { ...signatureAt(), type: 'date_signed', value: '2026-01-01' }],
      'signers[0].elements[1].value',
    ],
    [
      'a prefill breaking its rule',
      [signatureAt(), { ...signatureAt(), type: 'number', max: 5, value: '6' }],
      'signers[0].elements[1].value',
    ],
    [
      'a checkbox prefilled with yes',
      [signatureAt(), { ...signatureAt(), type: 'checkbox', value: 'yes' }],
      'signers[0].elements[1].value',
    ],
    [
      'a seal naming no asset of the owner',
      [signatureAt(), { ...signatureAt(), type: 'seal', value: 'file_nope' }],
      'signers[0].elements[1].value',
    ],
    ['fields but no signature', [{ ...signatureAt(), type: 'text' }], 'signers[0].elements'],
  ])('refuses %s with 400 naming the field, and stores nothing', async (_case, elements, field) => {
    const before = await sessionCount();
    const body = await refusedWith(elements);
    expect(body.errors!.map((error) => error.field)).toContain(field);
    expect(await sessionCount()).toBe(before);
  });

  describe('the signer fills their fields', () => {
    async function freshSession() {
      const session = await createSession(
        app,
        owner.token,
        sessionBody(fileId, { signers: [signerInput({ elements: fieldsOfEveryKind(assetId) })] }),
      );
      const elements = session.signers[0].elements as { field_id: string; type: string; label: string | null }[];
      const id = (label: string) => elements.find((element) => element.label === label || element.type === label)!.field_id;
      return { session, token: session.signers[0].token, id };
    }
    const storedElements = async (clientId: string) =>
      (await rest<any>(app, 'GET', `/esign/details?client_id=${clientId}`, { token: owner.token })).body.data.signers[0]
        .elements as any[];

    it('keeps valid values with the time they were filled, and the signer view shows the form', async () => {
      const { session, token, id } = await freshSession();
      const view = await signerApi(app, 'GET', '/session', token);
      const form = view.body.data.signer.form as any[];
      expect(form.find((field) => field.type === 'name')).toMatchObject({ input: 'text', suggestion: 'Asha Rao', value: null });
      expect(form.find((field) => field.type === 'initials')).toMatchObject({ suggestion: 'AR', every_page: true });
      expect(form.find((field) => field.type === 'date_signed')).toMatchObject({ input: null, read_only: true });
      expect(form.find((field) => field.type === 'seal')).toMatchObject({
        input: 'image',
        upload_path: expect.stringMatching(/\/image$/),
      });

      const filled = await signerApi(app, 'POST', '/fields', token, {
        values: {
          [id('Amount in words')]: 'Two lakh rupees',
          [id('Amount')]: '200000',
          [id('I agree to the terms')]: true,
          [id('Repayment')]: 'Quarterly',
          [id('Start date')]: '2026-12-01',
        },
      });
      expect(filled.status, JSON.stringify(filled.body)).toBe(200);
      const elements = await storedElements(session.client_id);
      const byId = (fieldId: string) => elements.find((element) => element.field_id === fieldId);
      expect(byId(id('Amount in words'))).toMatchObject({ value: 'Two lakh rupees', filled_at: expect.any(String) });
      expect(byId(id('I agree to the terms'))).toMatchObject({ value: 'true' });
      expect(byId(id('Start date'))).toMatchObject({ value: '2026-12-01' });
      expect(byId(id('Amount in words')).filled_at).toBe(byId(id('Amount')).filled_at);
      const audit = await rest<any>(app, 'GET', `/esign/audit?client_id=${session.client_id}`, { token: owner.token });
      const filledEvent = audit.body.data.events.find((event: any) => event.event === 'fields_filled');
      expect(filledEvent).toMatchObject({ signer_id: session.signers[0].signer_id });
      expect(filledEvent.details.field_ids).toHaveLength(5);
    });

    it('refuses a value that breaks its rule with 400 naming the element, and keeps none of the request', async () => {
      const { session, token, id } = await freshSession();
      const cases: [string, unknown][] = [
        [id('Amount'), '999'],
        [id('Amount'), '1e5'],
        [id('PAN'), 'abcde1234f'],
        [id('Start date'), '2026-02-30'],
        [id('Branch'), 'Delhi'],
        [id('I agree to the terms'), false],
        [id('Amount in words'), 'x'.repeat(81)],
        [id('Loan number'), 'LN-1'],
        [id('date_signed'), '2026-01-01'],
        [id('seal'), assetId],
        ['field_0000', 'x'],
      ];
      for (const [fieldId, value] of cases) {
        const response = await signerApi(app, 'POST', '/fields', token, { values: { [id('Notes')]: 'kept?', [fieldId]: value } });
        expect(response.status, `${fieldId}=${String(value)}`).toBe(400);
        expect(response.body.errors).toEqual([{ field: `values.${fieldId}`, problem: expect.any(String) }]);
      }
      const elements = await storedElements(session.client_id);
      expect(elements.every((element) => element.filled_at === null || element.filled_at === undefined)).toBe(true);
    });

    it('refuses to sign while a required field is empty, naming it', async () => {
      const { token, id } = await freshSession();
      await signerApi(app, 'POST', '/fields', token, { values: { [id('Amount in words')]: 'Two lakh rupees' } });
      const response = await signerApi(app, 'POST', '/sign', token, { consent: true });
      expect(response.status).toBe(400);
      expect(response.body.message).toBe('missing_fields');
      const missing = response.body.errors!.map((error) => error.field);
      expect(missing).toEqual(
        expect.arrayContaining([`values.${id('Amount')}`, `values.${id('I agree to the terms')}`, `values.${id('name')}`]),
      );
      expect(missing).not.toContain(`values.${id('Notes')}`);
      expect(missing).not.toContain(`values.${id('Amount in words')}`);
    });
  });

  it('an Aadhaar signer’s values stay as the ESP signs them while the eSign transaction is open (409)', async () => {
    const session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        sign_type: 'aadhaar',
        signers: [
          signerInput({ elements: [signatureAt(), { x: 72, y: 40, page: 0, alignment: 'left', type: 'text', label: 'City' }] }),
        ],
      }),
    );
    const token = session.signers[0].token;
    const fieldId = (session.signers[0].elements as { field_id: string; type: string }[])[1].field_id;
    expect((await signerApi(app, 'POST', '/fields', token, { values: { [fieldId]: 'Pune' } })).status).toBe(200);
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const changed = await signerApi(app, 'POST', '/fields', token, { values: { [fieldId]: 'Nagpur' } });
    expect(changed.status).toBe(409);
    const elements = (await rest<any>(app, 'GET', `/esign/details?client_id=${session.client_id}`, { token: owner.token })).body
      .data.signers[0].elements;
    expect(elements[1].value).toBe('Pune');
  });

  describe('templates', () => {
    async function saveTemplate(elements: Record<string, unknown>[]) {
      const response = await rest<any>(app, 'POST', '/templates/save', {
        token: owner.token,
        json: { name: 'Loan', file_id: fileId, signers: [{ elements }] },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.data;
    }
    const fromTemplate = (templateId: string, signer: Record<string, unknown>) =>
      rest<any>(app, 'POST', '/esign/initialize-from-template', {
        token: owner.token,
        json: {
          template_id: templateId,
          sign_type: 'suresign',
          signers: [{ full_name: 'Asha Rao', email: 'asha@example.com', reason: 'Borrower', ...signer }],
        },
      });

    it('keeps every kind and its rules, leaves a read-only value to element_values, and checks those values by kind', async () => {
      // A read-only field may be saved without its value: initialize-from-template gives it.
      const template = await saveTemplate([
        ...fieldsOfEveryKind(assetId).filter((element) => element.label !== 'Loan number'),
        { x: 72, y: 470, page: 0, alignment: 'left', type: 'text', label: 'Loan number', read_only: true },
      ]);
      const saved = template.signers[0].elements as any[];
      const field = (label: string) => saved.find((element) => element.label === label || element.type === label);
      expect(field('Repayment')).toMatchObject({
        type: 'radio',
        options: ['Monthly', 'Quarterly'],
        field_id: expect.stringMatching(/^field_/),
      });
      expect(field('PAN')).toMatchObject({ pattern: '[A-Z]{5}[0-9]{4}[A-Z]', max_length: 10 });
      expect(field('Loan number')).toMatchObject({ read_only: true, value: null });

      const refused = await fromTemplate(template.client_id, {
        element_values: {
          [field('Amount').field_id]: 'lots',
          [field('Branch').field_id]: 'Delhi',
          [field('date_signed').field_id]: 'now',
        },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.errors!.map((error: any) => error.field).sort()).toEqual(
        ['Amount', 'Branch', 'date_signed'].map((label) => `signers[0].element_values.${field(label).field_id}`).sort(),
      );

      const started = await fromTemplate(template.client_id, {
        element_values: { [field('Loan number').field_id]: 'LN-7', [field('Amount').field_id]: '250000' },
      });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const elements = started.body.data.signers[0].elements as any[];
      const made = (label: string) => elements.find((element) => element.label === label);
      expect(made('Loan number')).toMatchObject({ field_id: field('Loan number').field_id, value: 'LN-7', read_only: true });
      expect(made('Amount')).toMatchObject({ value: '250000', min: 1000, max: 500000, filled_at: null });
    });

    it('a read-only field still without a value at initialize-from-template is refused', async () => {
      const template = await saveTemplate([
        signatureAt(),
        { x: 72, y: 40, page: 0, alignment: 'left', type: 'text', read_only: true },
      ]);
      const response = await fromTemplate(template.client_id, {});
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([{ field: 'signers[0].elements[1].value', problem: 'required' }]);
    });
  });
});
