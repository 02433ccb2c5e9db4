/**
 * Small REST helpers the benchmarks use to set up their data the way an integrator would: uploads, sessions and
 * mock stamp orders, each failing loudly with the answer. Byte builders with no side effect (PNG, heavy PDF) come
 * from test/helpers/, shared with the tests; the rest of test/helpers/ (vitest, the corpus) is not for bench/.
 */
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { BenchApp } from './harness';

export { makePng } from '../test/helpers/png';

interface Envelope<T> {
  data: T | null;
  status_code: number;
  message: string;
  success: boolean;
}

export async function restCall<T>(
  app: BenchApp,
  method: 'GET' | 'POST',
  path: string,
  token: string,
  json?: unknown,
): Promise<{ status: number; body: Envelope<T> }> {
  const response = await fetch(`${app.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, body: (await response.json()) as Envelope<T> };
}

/** The `data` of a successful call; anything else throws with the whole answer. */
export async function restData<T>(
  app: BenchApp,
  method: 'GET' | 'POST',
  path: string,
  token: string,
  json?: unknown,
): Promise<T> {
  const { status, body } = await restCall<T>(app, method, path, token, json);
  if (status !== 200 || !body.success) throw new Error(`${method} ${path} answered ${status}: ${JSON.stringify(body)}`);
  return body.data!;
}

export async function graphqlCall<T>(
  app: BenchApp,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<T> {
  const response = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json()) as { data?: T; errors?: unknown[] };
  if (response.status !== 200 || body.errors?.length)
    throw new Error(`GraphQL answered ${response.status}: ${JSON.stringify(body)}`);
  return body.data!;
}

async function upload(app: BenchApp, path: string, token: string, bytes: Uint8Array, filename: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'application/octet-stream' }), filename);
  const response = await fetch(`${app.url}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json()) as Envelope<{ client_id: string }>;
  if (response.status !== 200 || !body.data)
    throw new Error(`upload to ${path} answered ${response.status}: ${JSON.stringify(body)}`);
  return body.data.client_id;
}

export const uploadPdf = (app: BenchApp, token: string, bytes: Uint8Array) =>
  upload(app, '/files/upload-pdf', token, bytes, 'contract.pdf');
export const uploadAsset = (app: BenchApp, token: string, bytes: Uint8Array) =>
  upload(app, '/files/upload-asset', token, bytes, 'sign.png');

/** A small text PDF of `pages` A4 pages. */
export async function makePdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) {
    doc.addPage([595, 842]).drawText(`Bench agreement, page ${i + 1} of ${pages}`, { x: 50, y: 780, size: 14, font });
  }
  return doc.save();
}

/** A suresign signer with a signature element and, when given, an image element showing an uploaded asset. */
export function signerWith(index: number, assetId?: string): Record<string, unknown> {
  const image = assetId
    ? { x: 300, y: 600, page: 1, type: 'image', alignment: 'left', value: assetId }
    : { x: 300, y: 700, page: 1, type: 'signature', alignment: 'right' };
  return {
    full_name: `Bench Signer ${index + 1}`,
    email: `signer${index + 1}@example.com`,
    elements: [{ x: 72, y: 600 - index * 60, page: 0, type: 'signature', alignment: 'left' }, image],
  };
}

export function sessionRequest(fileId: string, signers: number, assetId?: string, stamp?: Record<string, unknown>) {
  return {
    sign_type: 'suresign',
    file_id: fileId,
    signers: Array.from({ length: signers }, (_, i) => signerWith(i, assetId)),
    ...(stamp ? { stamp } : {}),
  };
}

export async function createSession(app: BenchApp, token: string, body: Record<string, unknown>): Promise<{ client_id: string }> {
  return restData<{ client_id: string }>(app, 'POST', '/esign/initialize-esign', token, body);
}

/** Polls `check` every 100 ms until it holds, for at most `timeoutMs`. */
export async function until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A mock order (free, procured at once by the app's workers) of `quantity` MH stamps of `duty` rupees; waits
 * until every instance is available and returns their ids, in serial order.
 */
export async function mockStamps(
  app: BenchApp,
  token: string,
  duty: number,
  quantity: number,
  articleId = 'MH-5',
): Promise<string[]> {
  const order = await restData<{ client_id: string }>(app, 'POST', '/stamps/create-order', token, {
    state_code: 'MH',
    article_id: articleId,
    first_party_name: 'Bench First Party',
    second_party_name: 'Bench Second Party',
    stamp_duty_amount: duty,
    consideration_amount: 1000,
    quantity,
    mock: true,
  });
  const connection = app.services.orm.em.fork().getConnection();
  let rows: { id: string; status: string }[] = [];
  await until(
    async () => {
      rows = await connection.execute('select id, status from stamp_instances where order_id = ? order by serial', [
        order.client_id,
      ]);
      if (rows.some((row) => row.status === 'rejected')) throw new Error(`mock order ${order.client_id} had a stamp rejected`);
      return rows.length === quantity && rows.every((row) => row.status === 'available');
    },
    `the ${quantity} stamps of mock order ${order.client_id} to be available`,
    45_000,
  );
  return rows.map((row) => row.id);
}
