import { inflateSync } from 'node:zlib';
import { PDFArray, PDFDocument, PDFName, PDFRawStream, type PDFPage } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSignature } from '../../src/modules/esign/completion/record-signature';
import { creditWallet } from '../../src/modules/wallet/credit-wallet';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest } from '../helpers/clients';
import { corpusFile } from '../helpers/fixtures';
import { FOUR_PAGE_PDF, initializeEsign, sessionBody, signatureAt, signerInput, uploadPdf } from '../helpers/factories';
import { until as untilDone } from '../helpers/until';

interface Stock {
  duty: number;
  quantity: number;
  state?: string;
  article?: string;
  first?: string;
  second?: string;
  /** A mock order (free, "MOCK - NOT A LEGAL STAMP"); real (procured, charged) by default. */
  mock?: boolean;
}

/** The raw (still encoded) bytes of a page's content streams: copied pages must keep them unchanged. */
function rawContents(page: PDFPage): Buffer[] {
  const contents = page.node.get(PDFName.of('Contents'));
  const refs = contents instanceof PDFArray ? contents.asArray() : [contents];
  return refs.map((ref) => Buffer.from((page.doc.context.lookup(ref) as PDFRawStream).contents));
}

function pageText(page: PDFPage): string {
  return rawContents(page)
    .map((raw) => {
      try {
        return inflateSync(raw).toString('latin1');
      } catch {
        return raw.toString('latin1');
      }
    })
    .join('\n');
}

/** pdf-lib writes standard-font text as hex strings. */
const hex = (text: string) => Buffer.from(text, 'latin1').toString('hex').toUpperCase();

describe('stamps reserved into sessions', () => {
  let app: TestApp;

  const sql = async <T = any>(query: string, params: unknown[] = []) =>
    (await app.services.orm.em.fork().getConnection().execute(query, params)) as T[];

  /** Jobs on a loaded machine: a minute before giving up. */
  const until = (check: () => Promise<boolean>, what: string) => untilDone(check, what, { timeoutMs: 60_000, pollMs: 100 });

  /** Procures stamps (real ones, paid from a credit made for them, unless `mock`) and returns their ids, oldest first. */
  async function stock(user: TestUser, spec: Stock): Promise<string[]> {
    // Duty and the default fee (10 rupees) per stamp, in paise.
    if (!spec.mock) await creditWallet(app.services.orm.em.fork(), user.user_id, BigInt((spec.duty + 10) * spec.quantity * 100));
    const response = await rest<{ client_id: string }>(app, 'POST', '/stamps/create-order', {
      token: user.token,
      json: {
        state_code: spec.state ?? 'MH',
        article_id: spec.article ?? 'MH-5',
        first_party_name: spec.first ?? 'Asha Rao',
        second_party_name: spec.second ?? 'Vikram Singh',
        stamp_duty_amount: spec.duty,
        consideration_amount: 1000,
        quantity: spec.quantity,
        mock: spec.mock ?? false,
      },
    });
    expect(response.status).toBe(200);
    const orderId = response.body.data!.client_id;
    await until(
      async () => (await sql(`select 1 from stamp_instances where order_id = ? and status = 'pending'`, [orderId])).length === 0,
      'procurement',
    );
    return (await sql<{ id: string }>('select id from stamp_instances where order_id = ? order by serial', [orderId])).map(
      (row) => row.id,
    );
  }

  const statusOf = async (ids: string[]) =>
    (
      await sql<{ id: string; status: string; session_id: string | null }>(
        `select id, status, session_id from stamp_instances where id in (${ids.map(() => '?').join(', ')})`,
        ids,
      )
    ).sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id));
  const heldBy = async (sessionId: string) =>
    await sql<{ id: string; duty_paise: string }>(`select id, duty_paise from stamp_instances where session_id = ? order by id`, [
      sessionId,
    ]);

  beforeAll(async () => {
    app = await startTestApp({ env: { STAMP_VENDOR_LATENCY_MS: '0', STAMP_VENDOR_REJECTION_RATE: '0' } });
  });
  afterAll(async () => app.close());

  describe('the amount flow', () => {
    it('picks the fewest stamps that add up exactly, oldest first among equals', async () => {
      const user = await app.createUser();
      const file = await uploadPdf(app, user.token);
      const hundreds = await stock(user, { duty: 100, quantity: 5 });
      const [fiveHundred] = await stock(user, { duty: 500, quantity: 1 });
      const amount = (value: string) => sessionBody(file, { stamp: { amount: value, state_code: 'MH', article_id: 'MH-5' } });

      const first = await initializeEsign(app, user.token, amount('500'));
      expect(first.status).toBe(200);
      expect((await heldBy(first.body.data!.client_id)).map((row) => row.id)).toEqual([fiveHundred]);

      const second = await initializeEsign(app, user.token, amount('500.00'));
      expect(second.status).toBe(200);
      expect((await heldBy(second.body.data!.client_id)).map((row) => row.id).sort()).toEqual([...hundreds].sort());

      const twoFifties = await stock(user, { duty: 250, quantity: 2 });
      await stock(user, { duty: 100, quantity: 5 });
      const third = await initializeEsign(app, user.token, amount('500'));
      expect((await heldBy(third.body.data!.client_id)).map((row) => row.id).sort()).toEqual([...twoFifties].sort());

      // Oldest first: of two orders of 100s, the first order's stamp goes first.
      const newer = await stock(user, { duty: 100, quantity: 1 });
      const fourth = await initializeEsign(app, user.token, amount('100'));
      const held = (await heldBy(fourth.body.data!.client_id)).map((row) => row.id);
      expect(held).toHaveLength(1);
      expect(held[0]).not.toBe(newer[0]);
    });

    it('narrows by parties, and answers 422 stamp_combination_not_found when nothing adds up', async () => {
      const user = await app.createUser();
      const file = await uploadPdf(app, user.token);
      await stock(user, { duty: 100, quantity: 3 });
      const [other] = await stock(user, { duty: 50, quantity: 1, first: 'Someone Else' });
      const body = (stamp: Record<string, unknown>) =>
        sessionBody(file, { stamp: { state_code: 'MH', article_id: 'MH-5', ...stamp } });

      const none = await initializeEsign(app, user.token, body({ amount: '375' }));
      expect(none.status).toBe(422);
      expect(none.body).toMatchObject({ data: null, status_code: 422, message: 'stamp_combination_not_found', success: false });
      const narrowed = await initializeEsign(app, user.token, body({ amount: '150', first_party_name: 'Asha Rao' }));
      expect(narrowed.status).toBe(422);
      const withParty = await initializeEsign(app, user.token, body({ amount: '150', first_party_name: 'Someone Else' }));
      expect(withParty.status).toBe(422);
      const wide = await initializeEsign(app, user.token, body({ amount: '150' }));
      expect(wide.status).toBe(200);
      expect((await heldBy(wide.body.data!.client_id)).map((row) => row.id)).toContain(other);
      // Another state or article has nothing for this user.
      const elsewhere = await initializeEsign(app, user.token, body({ amount: '100', state_code: 'KA', article_id: 'KA-5' }));
      expect(elsewhere.status).toBe(422);
      expect(await sql(`select 1 from esign_sessions where user_id = ?`, [user.user_id])).toHaveLength(1);
    });

    it.each([
      ['a missing state_code', { amount: '100', article_id: 'MH-5' }, 400, 'missing_fields', 'stamp.state_code'],
      ['a missing amount', { state_code: 'MH', article_id: 'MH-5' }, 400, 'missing_fields', 'stamp.amount'],
      [
        'an amount with three decimals',
        { amount: '100.005', state_code: 'MH', article_id: 'MH-5' },
        400,
        'bad_request',
        'stamp.amount',
      ],
      ['a negative amount', { amount: '-100', state_code: 'MH', article_id: 'MH-5' }, 400, 'bad_request', 'stamp.amount'],
      [
        'both flows at once',
        { amount: '100', state_code: 'MH', article_id: 'MH-5', stamp_instance_ids: ['stamp_inst_x'] },
        400,
        'bad_request',
        'stamp',
      ],
      [
        'an unknown state',
        { amount: '100', state_code: 'ZZ', article_id: 'MH-5' },
        400,
        'invalid_state_code',
        'stamp.state_code',
      ],
      [
        'an article of another state',
        { amount: '100', state_code: 'MH', article_id: 'KA-5' },
        400,
        'invalid_article_id',
        'stamp.article_id',
      ],
    ])('refuses %s', async (_name, stamp, status, message, field) => {
      const user = await app.createUser();
      const response = await initializeEsign(app, user.token, sessionBody(await uploadPdf(app, user.token), { stamp }));
      expect(response.status).toBe(status);
      expect(response.body.message).toBe(message);
      expect(response.body.errors?.map((e) => e.field)).toContain(field);
    });

    it('refuses an amount that is not a string', async () => {
      const user = await app.createUser();
      const response = await initializeEsign(
        app,
        user.token,
        sessionBody(await uploadPdf(app, user.token), { stamp: { amount: 100, state_code: 'MH', article_id: 'MH-5' } }),
      );
      expect(response.status).toBe(400);
      expect(response.body.message).toBe('bad_request');
    });
  });

  describe('the explicit flow', () => {
    it('reserves exactly the named stamps, in the order given', async () => {
      const user = await app.createUser();
      const file = await uploadPdf(app, user.token);
      const [a, b, c] = await stock(user, { duty: 100, quantity: 3 });
      const response = await initializeEsign(app, user.token, sessionBody(file, { stamp: { stamp_instance_ids: [c, a] } }));
      expect(response.status).toBe(200);
      expect(await statusOf([a, b, c])).toEqual([
        { id: a, status: 'reserved', session_id: response.body.data!.client_id },
        { id: b, status: 'available', session_id: null },
        { id: c, status: 'reserved', session_id: response.body.data!.client_id },
      ]);
    });

    it('answers 422 inventory_conflict and reserves nothing when any stamp is not the user’s and available', async () => {
      const user = await app.createUser();
      const stranger = await app.createUser();
      const file = await uploadPdf(app, user.token);
      const [a, b] = await stock(user, { duty: 100, quantity: 2 });
      const [theirs] = await stock(stranger, { duty: 100, quantity: 1 });
      const held = await initializeEsign(app, user.token, sessionBody(file, { stamp: { stamp_instance_ids: [a] } }));
      expect(held.status).toBe(200);

      for (const ids of [
        [b, a],
        [b, theirs],
        [b, 'stamp_inst_unknown'],
      ]) {
        const response = await initializeEsign(app, user.token, sessionBody(file, { stamp: { stamp_instance_ids: ids } }));
        expect(response.status).toBe(422);
        expect(response.body).toMatchObject({ data: null, message: 'inventory_conflict', success: false });
        expect(response.body.errors).toHaveLength(1);
      }
      expect((await statusOf([b]))[0]).toEqual({ id: b, status: 'available', session_id: null });
      expect((await statusOf([theirs]))[0].status).toBe('available');
      const repeated = await initializeEsign(app, user.token, sessionBody(file, { stamp: { stamp_instance_ids: [b, b] } }));
      expect(repeated.status).toBe(400);
    });
  });

  describe('mock and real stamps never mix in a session', () => {
    const certificates = async (ids: string[]) =>
      (
        await sql<{ certificate_number: string }>(
          `select certificate_number from stamp_instances where id in (${ids.map(() => '?').join(', ')})`,
          ids,
        )
      ).map((row) => row.certificate_number.split('-')[0]);

    it('the amount flow takes real stamps only, and mock ones only when the session asks with stamp.mock', async () => {
      const user = await app.createUser();
      const file = await uploadPdf(app, user.token);
      // The mock stamps are the older ones: oldest-first alone would pick them.
      const mock = await stock(user, { duty: 100, quantity: 2, mock: true });
      const real = await stock(user, { duty: 100, quantity: 2 });
      const amount = (value: string, extra: Record<string, unknown> = {}) =>
        sessionBody(file, { stamp: { amount: value, state_code: 'MH', article_id: 'MH-5', ...extra } });

      const realSession = await initializeEsign(app, user.token, amount('200'));
      expect(realSession.status, JSON.stringify(realSession.body)).toBe(200);
      const held = (await heldBy(realSession.body.data!.client_id)).map((row) => row.id);
      expect(held.sort()).toEqual([...real].sort());
      expect(await certificates(held)).toEqual(['IN', 'IN']);

      // Only mock stamps are left: a session that did not ask for them gets none.
      const none = await initializeEsign(app, user.token, amount('100'));
      expect(none.status).toBe(422);
      expect(none.body).toMatchObject({ message: 'stamp_combination_not_found', errors: [{ field: 'stamp.amount' }] });
      expect(none.body.errors![0].problem).toContain('stamp.mock');
      const explicitFalse = await initializeEsign(app, user.token, amount('100', { mock: false }));
      expect(explicitFalse.status).toBe(422);
      expect(await statusOf(mock)).toEqual(mock.map((id) => ({ id, status: 'available', session_id: null })));

      const mockSession = await initializeEsign(app, user.token, amount('200', { mock: true }));
      expect(mockSession.status, JSON.stringify(mockSession.body)).toBe(200);
      const heldMock = (await heldBy(mockSession.body.data!.client_id)).map((row) => row.id);
      expect(heldMock.sort()).toEqual([...mock].sort());
      expect(await certificates(heldMock)).toEqual(['MOCK', 'MOCK']);

      // And a mock session takes no real stamp.
      await stock(user, { duty: 100, quantity: 1 });
      const noMockLeft = await initializeEsign(app, user.token, amount('100', { mock: true }));
      expect(noMockLeft.status).toBe(422);
      expect(noMockLeft.body.message).toBe('stamp_combination_not_found');
    });

    it('the explicit flow refuses a stamp of the other kind with 422, naming it, and reserves nothing', async () => {
      const user = await app.createUser();
      const file = await uploadPdf(app, user.token);
      const [mockStamp] = await stock(user, { duty: 100, quantity: 1, mock: true });
      const [realA, realB] = await stock(user, { duty: 100, quantity: 2 });
      const explicit = (ids: string[], extra: Record<string, unknown> = {}) =>
        initializeEsign(app, user.token, sessionBody(file, { stamp: { stamp_instance_ids: ids, ...extra } }));

      const mixed = await explicit([realA, mockStamp]);
      expect(mixed.status).toBe(422);
      expect(mixed.body).toMatchObject({ data: null, success: false, message: 'inventory_conflict' });
      expect(mixed.body.errors).toEqual([
        { field: `stamp.stamp_instance_ids.${mockStamp}`, problem: expect.stringMatching(/mock/) },
      ]);
      const realInMock = await explicit([realA, mockStamp], { mock: true });
      expect(realInMock.status).toBe(422);
      expect(realInMock.body.errors).toEqual([
        { field: `stamp.stamp_instance_ids.${realA}`, problem: expect.stringMatching(/real/) },
      ]);
      expect(await statusOf([mockStamp, realA, realB])).toEqual(
        [mockStamp, realA, realB].map((id) => ({ id, status: 'available', session_id: null })),
      );
      expect(await sql(`select 1 from esign_sessions where user_id = ?`, [user.user_id])).toHaveLength(0);

      const mockSession = await explicit([mockStamp], { mock: true });
      expect(mockSession.status).toBe(200);
      const realSession = await explicit([realA, realB], { mock: false });
      expect(realSession.status).toBe(200);
      expect((await statusOf([mockStamp, realA])).map((row) => row.session_id)).toEqual([
        mockSession.body.data!.client_id,
        realSession.body.data!.client_id,
      ]);
    });

    it('initialize-from-template and GraphQL take the same stamp.mock', async () => {
      const user = await app.createUser();
      const file = await uploadPdf(app, user.token);
      const mock = await stock(user, { duty: 100, quantity: 1, mock: true });
      const real = await stock(user, { duty: 100, quantity: 1 });
      const template = await rest<any>(app, 'POST', '/templates/save', {
        token: user.token,
        json: { name: 'Lease', file_id: file, signers: [{ reason: 'Lease', elements: [signatureAt(1)] }] },
      });
      const fromTemplate = (mockFlag?: boolean) =>
        rest<any>(app, 'POST', '/esign/initialize-from-template', {
          token: user.token,
          json: {
            template_id: template.body.data.client_id,
            sign_type: 'suresign',
            stamp: { amount: '100', state_code: 'MH', article_id: 'MH-5', ...(mockFlag === undefined ? {} : { mock: mockFlag }) },
            signers: [{ full_name: 'Asha Rao', email: 'asha@example.com' }],
          },
        });
      const realSession = await fromTemplate();
      expect(realSession.status, JSON.stringify(realSession.body)).toBe(200);
      expect((await heldBy(realSession.body.data.client_id)).map((row) => row.id)).toEqual(real);
      const another = await fromTemplate();
      expect(another.status).toBe(422);

      const query = `mutation ($file: String, $ids: [String!]) {
        initializeEsign(file_id: $file, sign_type: "suresign", stamp: { stamp_instance_ids: $ids, mock: true },
          signers: [{ full_name: "Asha Rao", email: "asha@example.com", elements: [{ x: 72, y: 600, page: 0, type: "signature", alignment: "left" }] }]) {
          client_id stamps { stamp_id }
        }
      }`;
      const overGraphQL = async (ids: string[]) =>
        (await (
          await fetch(`${app.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
            body: JSON.stringify({ query, variables: { file, ids } }),
          })
        ).json()) as any;
      const freshReal = await stock(user, { duty: 100, quantity: 1 });
      const wrongKind = await overGraphQL(freshReal);
      expect(wrongKind.errors?.[0].extensions).toMatchObject({
        code: 'inventory_conflict',
        errors: [{ field: `stamp.stamp_instance_ids.${freshReal[0]}` }],
      });
      const mockSession = await overGraphQL(mock);
      expect(mockSession.errors).toBeUndefined();
      expect(mockSession.data.initializeEsign.stamps).toEqual([{ stamp_id: mock[0] }]);
    });
  });

  describe('under concurrency', () => {
    it('never reserves a stamp twice, and failures leave stamps available', async () => {
      const user = await app.createUser();
      const file = await uploadPdf(app, user.token);
      const ids = await stock(user, { duty: 100, quantity: 10 });
      const attempts = await Promise.all(
        Array.from({ length: 25 }, () =>
          initializeEsign(app, user.token, sessionBody(file, { stamp: { amount: '200', state_code: 'MH', article_id: 'MH-5' } })),
        ),
      );
      const won = attempts.filter((r) => r.status === 200);
      expect(won).toHaveLength(5);
      expect(
        attempts
          .filter((r) => r.status !== 200)
          .every((r) => r.status === 422 && r.body.message === 'stamp_combination_not_found'),
      ).toBe(true);
      const rows = await statusOf(ids);
      expect(rows.every((row) => row.status === 'reserved')).toBe(true);
      const perSession = new Map<string, number>();
      for (const row of rows) perSession.set(row.session_id!, (perSession.get(row.session_id!) ?? 0) + 1);
      expect([...perSession.keys()].sort()).toEqual(won.map((r) => r.body.data!.client_id).sort());
      expect([...perSession.values()].every((n) => n === 2)).toBe(true);
      // A refused initialization created no session.
      expect(await sql(`select 1 from esign_sessions where user_id = ?`, [user.user_id])).toHaveLength(5);

      const [x, y] = await stock(user, { duty: 100, quantity: 2 });
      const explicit = await Promise.all(
        Array.from({ length: 10 }, () =>
          initializeEsign(app, user.token, sessionBody(file, { stamp: { stamp_instance_ids: [x, y] } })),
        ),
      );
      expect(explicit.filter((r) => r.status === 200)).toHaveLength(1);
      expect(explicit.filter((r) => r.status === 422)).toHaveLength(9);
    });
  });

  describe('the document', () => {
    it.each([
      ['a 4-page pdfTeX document', FOUR_PAGE_PDF],
      ['a document with an outline and links', corpusFile('006-pdflatex-outline/pdflatex-outline.pdf')],
      ['a LibreOffice form', corpusFile('012-libreoffice-form/libreoffice-form.pdf')],
    ])('puts the stamp pages, unchanged, before %s and shifts every placement', async (_name, pdf) => {
      const user = await app.createUser();
      const file = await uploadPdf(app, user.token, pdf);
      const uploaded = await PDFDocument.load(pdf);
      const lastPage = uploaded.getPageCount() - 1;
      const [small, big] = [await stock(user, { duty: 100, quantity: 1 }), await stock(user, { duty: 500, quantity: 1 })];
      const response = await initializeEsign(
        app,
        user.token,
        sessionBody(file, {
          stamp: { stamp_instance_ids: [big[0], small[0]] },
          signers: [signerInput({ elements: [signatureAt(lastPage, 50, 60), signatureAt(0, 70, 80)] })],
        }),
      );
      expect(response.status).toBe(200);
      const session = response.body.data as any;
      expect(session.file_id).toBe(file);
      expect(session.current_pdf_file_id).not.toBe(file);
      const expected: Record<string, { x: number; y: number }[]> = {};
      (expected[String(lastPage + 2)] ??= []).push({ x: 50, y: 60 });
      (expected['2'] ??= []).push({ x: 70, y: 80 });
      expect(session.signers[0].positions).toEqual(expected);
      // Elements keep the integrator's pages; only positions (of the current PDF) shift.
      expect(session.signers[0].elements.map((e: any) => e.page)).toEqual([lastPage, 0]);

      const current = await rest<any>(app, 'GET', '/files/details', {
        token: user.token,
        query: { client_id: session.current_pdf_file_id },
      });
      expect(current.body.data.page_count).toBe(uploaded.getPageCount() + 2);
      const merged = await PDFDocument.load(Buffer.from(await (await fetch(current.body.data.download_url)).arrayBuffer()));
      expect(merged.getPageCount()).toBe(uploaded.getPageCount() + 2);

      for (const [index, stampId] of [big[0], small[0]].entries()) {
        const link = await rest<any>(app, 'GET', '/stamps/download-pdf', { token: user.token, query: { client_id: stampId } });
        const certificate = await PDFDocument.load(Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer()));
        expect(rawContents(merged.getPage(index))).toEqual(rawContents(certificate.getPage(0)));
        const [row] = await sql<{ certificate_number: string }>('select certificate_number from stamp_instances where id = ?', [
          stampId,
        ]);
        expect(pageText(merged.getPage(index))).toContain(hex(row.certificate_number));
      }
      // Then the uploaded pages, in order and unchanged.
      for (let page = 0; page <= lastPage; page++) {
        expect(rawContents(merged.getPage(page + 2))).toEqual(rawContents(uploaded.getPage(page)));
      }
    });
  });

  describe('when the session ends', () => {
    async function sessionWithStamps(user: TestUser, signers = 1) {
      const file = await uploadPdf(app, user.token);
      const ids = await stock(user, { duty: 100, quantity: 2 });
      const response = await initializeEsign(
        app,
        user.token,
        sessionBody(file, { stamp: { stamp_instance_ids: ids }, signers: Array.from({ length: signers }, () => signerInput()) }),
      );
      expect(response.status).toBe(200);
      return { session: response.body.data!, ids };
    }
    const orderCounts = async (user: TestUser, stampId: string) => {
      const [row] = await sql<{ order_id: string }>('select order_id from stamp_instances where id = ?', [stampId]);
      return (await rest<any>(app, 'GET', '/stamps/order-status', { token: user.token, query: { client_id: row.order_id } })).body
        .data.status_counts;
    };

    it('completion marks its stamps used', async () => {
      const user = await app.createUser();
      const { session, ids } = await sessionWithStamps(user, 2);
      expect(await orderCounts(user, ids[0])).toMatchObject({ reserved: 2, available: 0 });
      for (const signer of session.signers) {
        await recordSignature(app.services, app.services.orm.em.fork(), {
          sessionId: session.client_id,
          signerId: signer.signer_id,
          signedPdfs: new Map([[0, FOUR_PAGE_PDF]]),
        });
        const rows = await statusOf(ids);
        expect(rows.every((row) => row.status === (signer === session.signers.at(-1) ? 'used' : 'reserved'))).toBe(true);
      }
      expect(await orderCounts(user, ids[0])).toMatchObject({ used: 2, reserved: 0 });
      const usedList = await rest<any>(app, 'GET', '/stamps/list', {
        token: user.token,
        query: { page: 1, size: 10, status: 'used' },
      });
      expect(usedList.body.data.items).toHaveLength(1);
    });

    it('cancellation returns its stamps to the inventory', async () => {
      const user = await app.createUser();
      const { session, ids } = await sessionWithStamps(user);
      await rest(app, 'POST', '/esign/cancel', { token: user.token, json: { client_id: session.client_id } });
      expect(await statusOf(ids)).toEqual(ids.map((id) => ({ id, status: 'available', session_id: null })));
      expect(await orderCounts(user, ids[0])).toMatchObject({ available: 2, reserved: 0 });
      const reservedList = await rest<any>(app, 'GET', '/stamps/list', {
        token: user.token,
        query: { page: 1, size: 10, status: 'reserved' },
      });
      expect(reservedList.body.data.items).toEqual([]);
    });

    it('expiry returns its stamps to the inventory', async () => {
      const user = await app.createUser();
      const { session, ids } = await sessionWithStamps(user);
      await sql(`update esign_sessions set expires_at = now() - interval '1 second' where id = ?`, [session.client_id]);
      await app.services.boss.send('esign.expire', { client_id: session.client_id });
      await until(async () => (await statusOf(ids)).every((row) => row.status === 'available'), 'the stamps to be released');
      expect(
        (await rest<any>(app, 'GET', '/esign/details', { token: user.token, query: { client_id: session.client_id } })).body.data
          .status,
      ).toBe('expired');
    });
  });

  describe('a stamp instance’s life (GET stamps/instance)', () => {
    type Step = { from_status: string | null; status: string; session_id: string | null; reason: string | null };
    const instance = async (user: TestUser, stampId: string) => {
      const response = await rest<any>(app, 'GET', '/stamps/instance', { token: user.token, query: { client_id: stampId } });
      expect(response.status).toBe(200);
      return response.body.data;
    };
    const steps = (history: (Step & { at: string })[]): Step[] =>
      history.map(({ from_status, status, session_id, reason }) => ({ from_status, status, session_id, reason }));
    const created: Step = { from_status: null, status: 'pending', session_id: null, reason: null };
    const procured: Step = { from_status: 'pending', status: 'available', session_id: null, reason: null };

    async function reserveInto(user: TestUser, stampId: string, signers = 1) {
      const file = await uploadPdf(app, user.token);
      const response = await initializeEsign(
        app,
        user.token,
        sessionBody(file, {
          stamp: { stamp_instance_ids: [stampId] },
          signers: Array.from({ length: signers }, () => signerInput()),
        }),
      );
      expect(response.status).toBe(200);
      return response.body.data!;
    }

    it('reads one instance with its facts and every step: procured, reserved, released by cancel, expiry, then used', async () => {
      const user = await app.createUser();
      const [stampId] = await stock(user, { duty: 250, quantity: 1 });
      const fresh = await instance(user, stampId);
      expect(fresh).toMatchObject({
        stamp_id: stampId,
        status: 'available',
        serial: 1,
        state_code: 'MH',
        article_id: 'MH-5',
        stamp_duty_amount: '250',
        rejected_reason: null,
        session_id: null,
      });
      expect(fresh.certificate_number).toMatch(/^IN-MH\d{22}$/);
      expect(fresh.verification_code).toMatch(/^[A-Z2-9]{12}$/);
      expect(steps(fresh.history)).toEqual([created, procured]);

      const cancelled = await reserveInto(user, stampId);
      expect(await instance(user, stampId)).toMatchObject({ status: 'reserved', session_id: cancelled.client_id });
      await rest(app, 'POST', '/esign/cancel', { token: user.token, json: { client_id: cancelled.client_id } });

      const expired = await reserveInto(user, stampId);
      await sql(`update esign_sessions set expires_at = now() - interval '1 second' where id = ?`, [expired.client_id]);
      await app.services.boss.send('esign.expire', { client_id: expired.client_id });
      await until(async () => (await statusOf([stampId]))[0].status === 'available', 'the stamp to be released');

      const completed = await reserveInto(user, stampId);
      await recordSignature(app.services, app.services.orm.em.fork(), {
        sessionId: completed.client_id,
        signerId: completed.signers[0].signer_id,
        signedPdfs: new Map([[0, FOUR_PAGE_PDF]]),
      });

      const used = await instance(user, stampId);
      expect(used).toMatchObject({ status: 'used', session_id: completed.client_id });
      expect(steps(used.history)).toEqual([
        created,
        procured,
        { from_status: 'available', status: 'reserved', session_id: cancelled.client_id, reason: null },
        { from_status: 'reserved', status: 'available', session_id: cancelled.client_id, reason: 'session_cancelled' },
        { from_status: 'available', status: 'reserved', session_id: expired.client_id, reason: null },
        { from_status: 'reserved', status: 'available', session_id: expired.client_id, reason: 'session_expired' },
        { from_status: 'available', status: 'reserved', session_id: completed.client_id, reason: null },
        { from_status: 'reserved', status: 'used', session_id: completed.client_id, reason: 'session_completed' },
      ]);
      const times = used.history.map((step: { at: string }) => Date.parse(step.at));
      expect([...times].sort((a, b) => a - b)).toEqual(times);

      // GraphQL reads the same.
      const response = await fetch(`${app.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
        body: JSON.stringify({
          query: `query ($id: String) { stampInstance(client_id: $id) { stamp_id status session_id
            history { from_status status at session_id reason } } }`,
          variables: { id: stampId },
        }),
      });
      const body = (await response.json()) as any;
      expect(body.errors).toBeUndefined();
      expect(body.data.stampInstance).toEqual({
        stamp_id: stampId,
        status: 'used',
        session_id: completed.client_id,
        history: used.history,
      });
    });

    it('a rejected stamp’s history carries the vendor’s reason', async () => {
      const user = await app.createUser();
      const [stampId] = await stock(user, { duty: 100, quantity: 1 });
      // A pending instance refused by the vendor (what procurement does on a refusal).
      const [pending] = await sql<{ id: string }>(
        `insert into stamp_instances (id, order_id, user_id, state_code, article_id, duty_paise, serial, status)
         select 'stamp_inst_' || md5(random()::text), order_id, user_id, state_code, article_id, duty_paise, 2, 'pending'
           from stamp_instances where id = ? returning id`,
        [stampId],
      );
      await sql(`update stamp_instances set status = 'rejected', rejected_reason = 'stock unavailable' where id = ?`, [
        pending.id,
      ]);
      const rejected = await instance(user, pending.id);
      expect(rejected).toMatchObject({ status: 'rejected', rejected_reason: 'stock unavailable', certificate_number: null });
      expect(steps(rejected.history)).toEqual([
        created,
        { from_status: 'pending', status: 'rejected', session_id: null, reason: 'stock unavailable' },
      ]);
    });

    it('the database refuses a move the life does not allow, whoever makes it', async () => {
      const user = await app.createUser();
      const [stampId] = await stock(user, { duty: 100, quantity: 1 });
      const session = await reserveInto(user, stampId);
      await recordSignature(app.services, app.services.orm.em.fork(), {
        sessionId: session.client_id,
        signerId: session.signers[0].signer_id,
        signedPdfs: new Map([[0, FOUR_PAGE_PDF]]),
      });
      for (const status of ['available', 'reserved', 'pending', 'rejected']) {
        await expect(sql(`update stamp_instances set status = ? where id = ?`, [status, stampId])).rejects.toThrow(
          /cannot go from used to/,
        );
      }
      const [other] = await stock(user, { duty: 100, quantity: 1 });
      await expect(sql(`update stamp_instances set status = 'used' where id = ?`, [other])).rejects.toThrow(
        /cannot go from available to used/,
      );
      await expect(sql(`update stamp_instances set status = 'pending' where id = ?`, [other])).rejects.toThrow(
        /cannot go from available to pending/,
      );
      expect(await statusOf([stampId, other])).toEqual([
        { id: stampId, status: 'used', session_id: session.client_id },
        { id: other, status: 'available', session_id: null },
      ]);
      expect((await instance(user, stampId)).history).toHaveLength(4);
    });

    it('answers 404 for another user’s or an unknown instance, and 400 missing_fields without client_id', async () => {
      const owner = await app.createUser();
      const stranger = await app.createUser();
      const [stampId] = await stock(owner, { duty: 100, quantity: 1 });
      for (const [user, id] of [
        [stranger, stampId],
        [owner, 'stamp_inst_00000000000000000000000000000000'],
      ] as const) {
        const response = await rest<any>(app, 'GET', '/stamps/instance', { token: user.token, query: { client_id: id } });
        expect(response.status).toBe(404);
        expect(response.body).toMatchObject({ success: false, message: 'not_found' });
      }
      const missing = await rest<any>(app, 'GET', '/stamps/instance', { token: owner.token });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ success: false, message: 'missing_fields' });
    });
  });

  it('GraphQL reads session -> stamps (with order and PDF) and stamp -> session', async () => {
    const user = await app.createUser();
    const file = await uploadPdf(app, user.token);
    const ids = await stock(user, { duty: 100, quantity: 2 });
    const created = await initializeEsign(
      app,
      user.token,
      sessionBody(file, { stamp: { amount: '200', state_code: 'MH', article_id: 'MH-5' } }),
    );
    const sessionId = created.body.data!.client_id;
    const query = `query ($id: String!, $order: String!) {
      esignSession(client_id: $id) { client_id stamps { stamp_id status order { client_id } pdf_file { page_count } session { client_id } } }
      stampOrder(client_id: $order) { stamps { stamp_id status session { client_id status } } }
    }`;
    const [row] = await sql<{ order_id: string }>('select order_id from stamp_instances where id = ?', [ids[0]]);
    const response = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ query, variables: { id: sessionId, order: row.order_id } }),
    });
    const body = (await response.json()) as any;
    expect(body.errors).toBeUndefined();
    expect(body.data.esignSession.stamps.map((s: any) => s.stamp_id).sort()).toEqual([...ids].sort());
    expect(
      body.data.esignSession.stamps.every(
        (s: any) =>
          s.status === 'reserved' &&
          s.order.client_id === row.order_id &&
          s.pdf_file.page_count === 1 &&
          s.session.client_id === sessionId,
      ),
    ).toBe(true);
    expect(
      body.data.stampOrder.stamps.every((s: any) => s.session.client_id === sessionId && s.session.status === 'pending'),
    ).toBe(true);
  });

  it('the REST session read lists the stamps the session holds, then used, as {stamp_id, status}; none for others', async () => {
    const user = await app.createUser();
    const file = await uploadPdf(app, user.token);
    const ids = await stock(user, { duty: 100, quantity: 2 });
    const created = await initializeEsign(
      app,
      user.token,
      sessionBody(file, { stamp: { stamp_instance_ids: [ids[1], ids[0]] } }),
    );
    expect(created.status).toBe(200);
    const sessionId = created.body.data!.client_id;
    // The answer of initialize-esign already says which stamps it holds.
    expect(created.body.data!.stamps).toEqual(expect.arrayContaining(ids.map((id) => ({ stamp_id: id, status: 'reserved' }))));
    const details = async (id: string) =>
      (await rest<any>(app, 'GET', '/esign/details', { token: user.token, query: { client_id: id } })).body.data;
    const held = await details(sessionId);
    expect(held.stamps).toHaveLength(2);
    expect([...held.stamps].sort((a: any, b: any) => a.stamp_id.localeCompare(b.stamp_id))).toEqual(
      [...ids].sort().map((id) => ({ stamp_id: id, status: 'reserved' })),
    );
    await recordSignature(app.services, app.services.orm.em.fork(), {
      sessionId,
      signerId: created.body.data!.signers[0].signer_id,
      signedPdfs: new Map([[0, FOUR_PAGE_PDF]]),
    });
    expect((await details(sessionId)).stamps.map((s: any) => s.status)).toEqual(['used', 'used']);
    const listed = await rest<any>(app, 'GET', '/esign/list', { token: user.token, query: { page: 1, size: 10 } });
    expect(listed.body.data.items.find((s: any) => s.client_id === sessionId).stamps).toHaveLength(2);

    const plain = await initializeEsign(app, user.token, sessionBody(file));
    expect((await details(plain.body.data!.client_id)).stamps).toEqual([]);
    // A cancelled session gave its stamps back: it holds none.
    const [spare] = await stock(user, { duty: 100, quantity: 1 });
    const cancelled = await initializeEsign(app, user.token, sessionBody(file, { stamp: { stamp_instance_ids: [spare] } }));
    await rest(app, 'POST', '/esign/cancel', { token: user.token, json: { client_id: cancelled.body.data!.client_id } });
    expect((await details(cancelled.body.data!.client_id)).stamps).toEqual([]);
  });

  it('initialize-from-template reserves stamps the same way', async () => {
    const user = await app.createUser();
    const file = await uploadPdf(app, user.token);
    const ids = await stock(user, { duty: 100, quantity: 1 });
    const template = await rest<any>(app, 'POST', '/templates/save', {
      token: user.token,
      json: { name: 'Lease', file_id: file, signers: [{ reason: 'Lease', elements: [signatureAt(1)] }] },
    });
    const response = await rest<any>(app, 'POST', '/esign/initialize-from-template', {
      token: user.token,
      json: {
        template_id: template.body.data.client_id,
        sign_type: 'suresign',
        stamp: { amount: '100', state_code: 'MH', article_id: 'MH-5' },
        signers: [{ full_name: 'Asha Rao', email: 'asha@example.com' }],
      },
    });
    expect(response.status).toBe(200);
    expect(response.body.data.signers[0].positions).toEqual({ '2': [{ x: 72, y: 600 }] });
    expect((await statusOf(ids))[0]).toMatchObject({ status: 'reserved', session_id: response.body.data.client_id });
  });
});
