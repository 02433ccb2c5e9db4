import { print } from 'graphql';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { sessionTopic } from '../../src/modules/esign/session-events';
import {
  EsignFieldValuesDocument,
  EsignSignerFieldsDocument,
  EsignSignerFieldsUpdatedDocument,
  type EsignSignerFieldsUpdatedSubscription,
} from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql, rest, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signatureAt, signerInput, uploadPdf, type SessionJson } from '../helpers/factories';
import { hasPdftotext, pdfText } from '../helpers/pdf-text';
import { untilSubscribed } from '../helpers/subscriptions';
import { WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * Issue 31: what signers filled, read back by the owner: GET esign/field-values (JSON and CSV) and its GraphQL
 * query, the signer's fields in esign.signer.signed and in the session subscription, and the certificate of
 * completion listing each signer's values under the signer.
 */

const at = (y: number, rest: Record<string, unknown>) => ({
  x: 72,
  y,
  page: 0,
  alignment: 'left',
  width: 220,
  height: 20,
  ...rest,
});

interface FieldRow {
  field_id: string;
  signer_id: string;
  signer_position: number;
  type: string;
  label: string | null;
  value: string | null;
  shown: string | null;
  filled_at: string | null;
  filled_by: string | null;
}

/** RFC 4180, as a spreadsheet reads it: quoted cells may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') ((cell += '"'), i++);
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') (row.push(cell), (cell = ''));
    else if (c === '\r' && text[i + 1] === '\n') {
      (row.push(cell), rows.push(row), (row = []), (cell = ''), i++);
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) (row.push(cell), rows.push(row));
  return rows;
}

const DATE_SIGNED_SHOWN = /^\d\d\/\d\d\/\d{4} \d\d:\d\d IST$/;

describe('field values through the API, webhooks, subscriptions and the certificate', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let receiver: WebhookReceiver;
  let session: SessionJson;
  let rows: FieldRow[];
  const beforeSigning: FieldRow[][] = [];
  const updates: EsignSignerFieldsUpdatedSubscription['esignSessionUpdated'][] = [];

  const fieldOf = (signer: number, label: string) =>
    (session.signers[signer].elements as { field_id: string; label: string | null; type: string }[]).find(
      (element) => element.label === label || element.type === label,
    )!.field_id;
  const row = (label: string) => rows.find((entry) => entry.label === label || entry.type === label)!;

  async function signerCall(signer: number, route: '/fields' | '/sign', body: unknown) {
    const response = await signerApi(app, 'POST', route, session.signers[signer].token, body);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  }

  async function fieldValues(token: string, query: Record<string, string>) {
    return rest<{ client_id: string; fields: FieldRow[] }>(app, 'GET', '/esign/field-values', { token, query });
  }

  beforeAll(async () => {
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    owner = await app.createUser();
    other = await app.createUser();
    receiver = await new WebhookReceiver().start();
    const endpoint = await rest(app, 'POST', '/webhooks/create', {
      token: owner.token,
      json: { url: receiver.url, events: ['esign.signer.signed'] },
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);

    const fileId = await uploadPdf(app, owner.token);
    session = await createSession(
      app,
      owner.token,
      sessionBody(fileId, {
        signers: [
          signerInput({
            full_name: 'Asha Rao',
            elements: [
              signatureAt(0, 72, 700),
              at(40, { type: 'text', label: 'Purpose' }),
              at(70, { type: 'checkbox', label: 'Consent', required: true, width: 14, height: 14 }),
              at(100, { type: 'dropdown', label: 'Branch', options: ['Lucknow', 'Chennai, South'] }),
              at(130, { type: 'date', label: 'Start', format: 'DD MMM YYYY' }),
              at(160, { type: 'text', label: 'Note' }),
            ],
          }),
          signerInput({
            full_name: 'Vikram Singh',
            email: 'vikram@example.com',
            elements: [
              signatureAt(0, 300, 700),
              at(200, { type: 'date_signed', label: 'Signed on' }),
              at(230, { type: 'text', label: 'Loan number', read_only: true, value: 'LN-2026-0042' }),
              at(260, { type: 'text', label: 'Remarks', required: false }),
            ],
          }),
        ],
      }),
    );

    // The second signer's subscription of the session, live before anything is filled.
    const client = createClient({
      url: `${app.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${owner.token}` },
      retryAttempts: 0,
    });
    const before = app.services.events.subscriberCount(sessionTopic(session.client_id));
    client.subscribe<EsignSignerFieldsUpdatedSubscription>(
      { query: print(EsignSignerFieldsUpdatedDocument), variables: { client_id: session.client_id } },
      {
        next: (result) => result.data && updates.push(result.data.esignSessionUpdated),
        error: () => undefined,
        complete: () => undefined,
      },
    );
    await untilSubscribed(app, sessionTopic(session.client_id), before);

    beforeSigning.push((await fieldValues(owner.token, { client_id: session.client_id })).body.data!.fields);
    await signerCall(0, '/fields', {
      values: {
        [fieldOf(0, 'Purpose')]: 'गृह ऋण, "home" loan',
        [fieldOf(0, 'Consent')]: true,
        [fieldOf(0, 'Branch')]: 'Chennai, South',
        [fieldOf(0, 'Start')]: '2026-12-01',
        [fieldOf(0, 'Note')]: '=HYPERLINK("http://evil.example")',
      },
    });
    await signerCall(0, '/sign', { consent: true });
    await signerCall(1, '/sign', { consent: true });
    rows = (await fieldValues(owner.token, { client_id: session.client_id })).body.data!.fields;
    client.dispose();
  });
  afterAll(async () => {
    await receiver?.stop();
    await app?.close();
  });

  it('answers every field of every signer, signer by signer, in element order (signatures are not fields)', () => {
    expect(rows.map((entry) => [entry.signer_position, entry.label])).toEqual([
      [0, 'Purpose'],
      [0, 'Consent'],
      [0, 'Branch'],
      [0, 'Start'],
      [0, 'Note'],
      [1, 'Signed on'],
      [1, 'Loan number'],
      [1, 'Remarks'],
    ]);
    expect(rows.every((entry, index) => entry.signer_id === session.signers[index < 5 ? 0 : 1].signer_id)).toBe(true);
  });

  it('gives each value as kept, as drawn, who filled it and when', () => {
    expect(row('Purpose')).toMatchObject({
      type: 'text',
      value: 'गृह ऋण, "home" loan',
      shown: 'गृह ऋण, "home" loan',
      filled_by: 'signer',
    });
    expect(row('Consent')).toMatchObject({ type: 'checkbox', value: 'true', filled_by: 'signer' });
    expect(row('Branch')).toMatchObject({ type: 'dropdown', value: 'Chennai, South', shown: 'Chennai, South' });
    expect(row('Start')).toMatchObject({ type: 'date', value: '2026-12-01', shown: '01 Dec 2026', filled_by: 'signer' });
    // The JSON keeps a value as the signer gave it; only the CSV guards spreadsheets against it.
    expect(row('Note').value).toBe('=HYPERLINK("http://evil.example")');
    const signedOn = row('Signed on');
    expect(signedOn).toMatchObject({ type: 'date_signed', filled_by: 'service' });
    expect(signedOn.value).toBe(signedOn.filled_at);
    expect(signedOn.shown).toMatch(DATE_SIGNED_SHOWN);
    expect(row('Loan number')).toMatchObject({
      value: 'LN-2026-0042',
      shown: 'LN-2026-0042',
      filled_at: null,
      filled_by: 'owner',
    });
    expect(row('Remarks')).toMatchObject({ value: null, shown: null, filled_at: null, filled_by: null });
    for (const label of ['Purpose', 'Consent', 'Branch', 'Start', 'Note']) {
      expect(Date.parse(row(label).filled_at!)).toBeLessThanOrEqual(Date.parse(signedOn.filled_at!));
    }
  });

  it('before anyone filled anything: only the prefill has a value', () => {
    const filled = beforeSigning[0].filter((entry) => entry.value !== null);
    expect(filled.map((entry) => [entry.label, entry.filled_by])).toEqual([['Loan number', 'owner']]);
    expect(beforeSigning[0]).toHaveLength(8);
  });

  it('GraphQL answers the same rows, and details shows each element’s value and filled_at', async () => {
    const answer = await gql(app, owner.token, EsignFieldValuesDocument, { client_id: session.client_id });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.esignFieldValues).toEqual({ client_id: session.client_id, fields: rows });

    const details = await rest<SessionJson>(app, 'GET', '/esign/details', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    const elements = details.body.data!.signers.flatMap(
      (signer) => signer.elements as { field_id: string; value: string | null; filled_at: string | null }[],
    );
    for (const entry of rows) {
      expect(elements.find((element) => element.field_id === entry.field_id)).toMatchObject({
        value: entry.value,
        filled_at: entry.filled_at,
      });
    }
    // REST details keeps the contract's signer: `fields` is GraphQL's.
    expect(details.body.data!.signers[0]).not.toHaveProperty('fields');
    const viaGraphql = await gql(app, owner.token, EsignSignerFieldsDocument, { client_id: session.client_id });
    expect(viaGraphql.data!.esignSession.signers[1].fields.map((entry) => entry.filled_by)).toEqual(['service', 'owner', null]);
  });

  it('format=csv answers the same rows as CSV, formula cells guarded', async () => {
    const response = await fetch(new URL(`/api/v1/esign/field-values?client_id=${session.client_id}&format=csv`, app.url), {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${session.client_id}-field-values.csv"`);
    const text = await response.text();
    expect(text.endsWith('\r\n')).toBe(true);
    const [header, ...body] = parseCsv(text);
    const columns = [
      'field_id',
      'signer_id',
      'signer_position',
      'type',
      'label',
      'value',
      'shown',
      'filled_at',
      'filled_by',
    ] as const;
    expect(header).toEqual(columns);
    const expected = rows.map((entry) =>
      columns.map((column) => {
        const cell = entry[column] === null ? '' : String(entry[column]);
        return /^[=+\-@]/.test(cell) ? `'${cell}` : cell;
      }),
    );
    expect(body).toEqual(expected);
    expect(body.find((cells) => cells[4] === 'Note')![5]).toBe(`'=HYPERLINK("http://evil.example")`);
    expect(body.find((cells) => cells[4] === 'Purpose')![5]).toBe('गृह ऋण, "home" loan');
  });

  it('refuses another owner’s session, an unknown id, no token, and a format it lacks', async () => {
    for (const [token, query] of [
      [other.token, { client_id: session.client_id }],
      [other.token, { client_id: session.client_id, format: 'csv' }],
      [owner.token, { client_id: 'esign_unknown' }],
      [owner.token, { client_id: 'esign_unknown', format: 'csv' }],
    ] as const) {
      const answer = await fieldValues(token, query);
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ success: false, data: null });
    }
    expect(
      (await rest(app, 'GET', '/esign/field-values', { query: { client_id: session.client_id, format: 'csv' } })).status,
    ).toBe(401);
    const unknown = await fieldValues(owner.token, { client_id: session.client_id, format: 'xlsx' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ field: 'format', problem: 'must be one of json, csv' }]);
    expect((await fieldValues(owner.token, { format: 'csv' })).status).toBe(400);
    const asJson = await fieldValues(owner.token, { client_id: session.client_id, format: 'json' });
    expect(asJson.body.data!.fields).toEqual(rows);
  });

  it('esign.signer.signed carries that signer’s fields, as the route shows them at the signature', async () => {
    const signed = await receiver.waitFor(
      (received) => received.filter((r) => r.json.type === 'esign.signer.signed').length === 2,
      'two signatures',
    );
    const events = signed.filter((r) => r.json.type === 'esign.signer.signed');
    const first = events.find((event) => event.json.signer_id === session.signers[0].signer_id)!;
    const second = events.find((event) => event.json.signer_id === session.signers[1].signer_id)!;
    expect(first.json.fields).toEqual(rows.slice(0, 5));
    expect(second.json.fields).toEqual(rows.slice(5));
    // Additive: the session as details shows it is still the event's data.
    expect(first.json.data.client_id).toBe(session.client_id);
  });

  it('the session subscription shows the signer’s fields at each change', async () => {
    const afterFirst = updates.find((update) => update.signers[0].status === 'completed')!;
    expect(afterFirst.signers[0].fields.map((entry) => entry.value)).toEqual(rows.slice(0, 5).map((entry) => entry.value));
    expect(afterFirst.signers[0].fields.map((entry) => entry.shown)).toContain('01 Dec 2026');
  });

  it.skipIf(!hasPdftotext)('the certificate of completion lists each signer’s values under the signer', async () => {
    const link = await rest<{ url: string }>(app, 'GET', '/esign/download-certificate', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    const certificate = Buffer.from(await (await fetch(link.body.data!.url)).arrayBuffer());
    const text = pdfText(certificate, { layout: false }).normalize('NFC');
    const asha = text.indexOf('1. Asha Rao');
    const vikram = text.indexOf('2. Vikram Singh');
    expect(asha).toBeGreaterThan(-1);
    expect(vikram).toBeGreaterThan(asha);
    const first = text.slice(asha, vikram);
    for (const shown of [
      'Purpose: गृह ऋण, "home" loan',
      'Consent: true',
      'Branch: Chennai, South',
      'Start: 01 Dec 2026',
      'by the signer',
    ]) {
      expect(first.replace(/\s+/g, ' ')).toContain(shown);
    }
    const second = text.slice(vikram, text.indexOf('Audit trail')).replace(/\s+/g, ' ');
    expect(second).toContain(`Signed on: ${row('Signed on').shown}`);
    expect(second).toContain('Loan number: LN-2026-0042 (prefilled by the sender)');
    expect(second).toContain('Remarks: (empty)');
  });
});
