import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PDFDocument, PDFName, PDFNumber, PDFRawStream } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileDetailsDocument, FileListDocument, UploadAssetDocument, UploadPdfDocument } from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql, gqlUpload, rest, restUpload, type GraphQLResponse, type RestResponse } from '../helpers/clients';
import { inspectImage } from '../../src/modules/files/inspect-image';
import { blankPicture, jpegBytes } from '../helpers/faces';
import { MINIMAL_PDF, allCorpusFileNames, corpusFile, corpusPdfs, makePng } from '../helpers/fixtures';

/** The contract's limit for upload-pdf: 50 MB = 52,428,800 bytes. */
const PDF_LIMIT = 52_428_800;
const ENVELOPE_KEYS = ['data', 'message', 'status_code', 'success'];
const UPLOADED_KEYS = ['client_id', 'mime', 'name', 'user_id'];
const ASSET_FORMAT_MESSAGE = 'upload failed: unsupported image format (JPEG or PNG only)';
const ASSET_EMPTY_MESSAGE = 'upload failed: empty file';

/** Damaged beyond recovery: refused as invalid_pdf (decided and documented in docs/api.md). */
const UNRECOVERABLE_PDF = '017-unreadable-meta-data/unreadablemetadata.pdf';
const ENCRYPTED_PDF = '005-libreoffice-writer-password/libreoffice-writer-password.pdf';

interface Uploaded {
  user_id: string;
  client_id: string;
  name: string;
  mime: string;
}

interface FileInfo extends Uploaded {
  kind: string;
  size_bytes: number;
  sha256: string;
  page_count: number | null;
  width: number | null;
  height: number | null;
  created_at: string;
  download_url: string;
}

interface FilePage {
  items: FileInfo[];
  has_next: boolean;
}

type UploadFile = { bytes: Uint8Array; filename: string; type?: string };

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** MINIMAL_PDF followed, after its %%EOF, by comment lines (`%` + spaces + newline) up to exactly `size` bytes. */
function paddedPdf(size: number): Buffer {
  const out = Buffer.alloc(size, 0x20);
  MINIMAL_PDF.copy(out, 0);
  let position = MINIMAL_PDF.length;
  if (MINIMAL_PDF[position - 1] !== 0x0a) out[position++] = 0x0a;
  for (let line = position; line < size; line += 100) {
    out[line] = 0x25; // '%'
    const end = Math.min(line + 99, size - 1);
    if (end > line) out[end] = 0x0a;
  }
  return out;
}

/** The bytes of the first DCTDecode (JPEG) image stream of a corpus PDF, with its declared size. */
async function jpegFromCorpus(relative: string): Promise<{ bytes: Buffer; width: number; height: number }> {
  const document = await PDFDocument.load(corpusFile(relative), { updateMetadata: false });
  for (const [, object] of document.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFRawStream)) continue;
    const filter = object.dict.get(PDFName.of('Filter'));
    if (filter !== PDFName.of('DCTDecode')) continue;
    const width = object.dict.get(PDFName.of('Width'));
    const height = object.dict.get(PDFName.of('Height'));
    if (!(width instanceof PDFNumber) || !(height instanceof PDFNumber)) continue;
    return { bytes: Buffer.from(object.contents), width: width.asNumber(), height: height.asNumber() };
  }
  throw new Error(`no DCTDecode image stream in ${relative}`);
}

/** A tiny but well-formed GIF89a (1x1, one colour). */
const GIF_BYTES = Buffer.from('474946383961010001008000000000ffffff21f90401000000002c00000000010001000002024401003b', 'hex');
const TEXT_BYTES = Buffer.from('This is a plain text file, not a document.\n'.repeat(20), 'utf8');

function expectSuccessEnvelope(response: RestResponse<Uploaded>, user: TestUser, name: string, mime: string): Uploaded {
  expect(response.status).toBe(200);
  expect(Object.keys(response.body).sort()).toEqual(ENVELOPE_KEYS);
  expect(response.body).toEqual({
    data: { user_id: user.user_id, client_id: expect.stringMatching(/^file_/), name, mime },
    status_code: 200,
    message: 'Success',
    success: true,
  });
  expect(Object.keys(response.body.data!).sort()).toEqual(UPLOADED_KEYS);
  return response.body.data!;
}

function expectErrorEnvelope(response: RestResponse<unknown>, status: number, message: string) {
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({ data: null, status_code: status, message, success: false });
  expect(
    Object.keys(response.body)
      .filter((key) => key !== 'errors')
      .sort(),
  ).toEqual(ENVELOPE_KEYS);
}

function expectGraphQLError(response: GraphQLResponse<unknown>, code: string, message?: string) {
  expect(response.data ?? null).toBeNull();
  expect(response.errors).toHaveLength(1);
  expect(response.errors![0].extensions?.code).toBe(code);
  if (message !== undefined) expect(response.errors![0].message).toBe(message);
}

interface StreamedUpload {
  status: number;
  /** The parsed JSON answer: the REST envelope, or a GraphQL response. */
  body: Record<string, unknown>;
  /** Bytes of the body handed to the socket when the response arrived. */
  writtenAtResponse: number;
  /** Peak growth of arrayBuffers + heapUsed of this process (the app runs in it) while the upload ran. */
  peakGrowth: number;
}

/**
 * Streams a multipart body of `fileBytes` bytes (1 MB chunks, framing written by hand, respecting
 * backpressure) and stops writing as soon as the response arrives.
 */
function streamMultipart(
  app: TestApp,
  path: string,
  headers: Record<string, string>,
  leadingParts: { name: string; value: string }[],
  fileField: string,
  fileBytes: number,
): Promise<StreamedUpload> {
  const boundary = `----esign-test-${randomBytes(8).toString('hex')}`;
  const fields = leadingParts
    .map((part) => `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`)
    .join('');
  const head = Buffer.from(
    `${fields}--${boundary}\r\nContent-Disposition: form-data; name="${fileField}"; filename="huge.pdf"\r\n` +
      'Content-Type: application/pdf\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  const chunks = fileBytes / chunk.length;
  const first = Buffer.from(chunk);
  MINIMAL_PDF.copy(first, 0, 0, 16);

  // What counts is memory the upload keeps alive. Chunks the service has read and dropped are garbage that
  // V8 may leave uncollected for tens of MB (external memory triggers a collection late), so when gc() can
  // be had it runs once before the baseline and after every GC_EVERY bytes sent: garbage then stays a few
  // MB, while a service that buffered the upload would still show all of it.
  const gc = exposedGc();
  const GC_EVERY = 8 * 1024 * 1024;
  const sample = () => {
    const usage = process.memoryUsage();
    return usage.arrayBuffers + usage.heapUsed;
  };
  gc?.();
  const baseline = sample();
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, sample());
  }, 2);

  return new Promise<StreamedUpload>((resolve, reject) => {
    let written = 0;
    let sent = 0;
    let responded = false;
    let settled = false;
    const finish = (outcome: { ok: StreamedUpload } | { error: Error }) => {
      if (settled) return;
      settled = true;
      clearInterval(sampler);
      request.destroy();
      if ('ok' in outcome) resolve(outcome.ok);
      else reject(outcome.error);
    };
    const request = http.request(new URL(path, app.url), {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + fileBytes + tail.length),
      },
    });
    request.on('response', (response) => {
      responded = true;
      const writtenAtResponse = written;
      peak = Math.max(peak, sample());
      const received: Buffer[] = [];
      response.on('data', (data: Buffer) => received.push(data));
      response.on('error', () => undefined);
      // 'end' comes first when the answer is complete; a 'close' alone means it was cut off.
      response.on('close', () => finish({ error: new Error('the response was cut off before its end') }));
      response.on('end', () => {
        peak = Math.max(peak, sample());
        let body: StreamedUpload['body'];
        try {
          body = JSON.parse(Buffer.concat(received).toString('utf8'));
        } catch (error) {
          finish({ error: error as Error });
          return;
        }
        finish({ ok: { status: response.statusCode ?? 0, body, writtenAtResponse, peakGrowth: peak - baseline } });
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      // The server may close its side once it has answered: not a failure of the upload under test.
      if (responded && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) return;
      finish({ error: new Error(`the upload failed before any response arrived: ${error.code ?? error.message}`) });
    });
    let collectedAt = 0;
    const pump = () => {
      while (!responded && !settled && sent < chunks) {
        const piece = sent === 0 ? first : chunk;
        sent += 1;
        written += piece.length;
        if (gc && written - collectedAt >= GC_EVERY) {
          peak = Math.max(peak, sample());
          gc();
          collectedAt = written;
        }
        if (!request.write(piece)) {
          request.once('drain', pump);
          return;
        }
      }
      if (!responded && !settled && sent === chunks) {
        written += tail.length;
        request.end(tail);
      }
    };
    written += head.length;
    request.write(head);
    pump();
  });
}

/** `gc()` of this process, when V8 lets us have it (only to make the memory baseline less noisy). */
function exposedGc(): (() => void) | undefined {
  try {
    v8.setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

describe('inspectImage', () => {
  it('reads a JPEG or PNG that is a slice of a larger buffer (pdf-lib reads from offset 0 of the ArrayBuffer)', async () => {
    const png = makePng(30, 20);
    const jpeg = jpegBytes(blankPicture(30, 20, (x, y) => [x * 8, y * 12, 90]));
    for (const [bytes, mime] of [
      [png, 'image/png'],
      [jpeg, 'image/jpeg'],
    ] as const) {
      const padded = Buffer.concat([Buffer.alloc(7, 0xaa), bytes, Buffer.alloc(5, 0xbb)]);
      const slice = padded.subarray(7, 7 + bytes.length);
      expect(slice.byteOffset).toBeGreaterThan(0);
      expect(await inspectImage(slice)).toMatchObject({ mime });
    }
  });
});

describe('file uploads', () => {
  let app: TestApp;
  let alice: TestUser;
  /** Every upload the service accepted in this file: the `files` table must hold exactly these rows. */
  const accepted = new Set<string>();

  const countRows = async (clientId?: string): Promise<number> => {
    const connection = app.services.orm.em.fork().getConnection();
    const rows = clientId
      ? await connection.execute<{ count: string }[]>('select count(*) as count from files where id = ?', [clientId])
      : await connection.execute<{ count: string }[]>('select count(*) as count from files');
    return Number(rows[0].count);
  };

  const uploadPdfRest = async (user: TestUser, file: UploadFile) => {
    const response = await restUpload<Uploaded>(app, '/files/upload-pdf', user.token, file);
    if (response.status === 200 && response.body.data) accepted.add(response.body.data.client_id);
    return response;
  };
  const uploadAssetRest = async (user: TestUser, file: UploadFile) => {
    const response = await restUpload<Uploaded>(app, '/files/upload-asset', user.token, file);
    if (response.status === 200 && response.body.data) accepted.add(response.body.data.client_id);
    return response;
  };
  const uploadPdfGql = async (user: TestUser, file: UploadFile) => {
    const response = await gqlUpload(app, user.token, UploadPdfDocument, file);
    if (response.data?.uploadPdf) accepted.add(response.data.uploadPdf.client_id);
    return response;
  };
  const uploadAssetGql = async (user: TestUser, file: UploadFile) => {
    const response = await gqlUpload(app, user.token, UploadAssetDocument, file);
    if (response.data?.uploadAsset) accepted.add(response.data.uploadAsset.client_id);
    return response;
  };
  const detailsRest = (user: TestUser, clientId: string) =>
    rest<FileInfo>(app, 'GET', '/files/details', { token: user.token, query: { client_id: clientId } });

  /** Runs `refuse` and checks that the refusal left the files table as it was. */
  const expectNoNewRow = async (refuse: () => Promise<void>) => {
    const before = await countRows();
    await refuse();
    expect(await countRows()).toBe(before);
  };

  beforeAll(async () => {
    app = await startTestApp();
    alice = await app.createUser();
  });
  afterAll(async () => app?.close());

  describe('the shared PDF corpus', () => {
    const corpus = corpusPdfs();
    const acceptable = corpus.filter((entry) => !entry.encrypted && entry.path !== UNRECOVERABLE_PDF);

    it('lists every PDF present on disk in files.json, including the encrypted and the damaged one', () => {
      expect(corpus.map((entry) => entry.path).sort()).toEqual(allCorpusFileNames());
      expect(corpus.find((entry) => entry.path === ENCRYPTED_PDF)?.encrypted).toBe(true);
      expect(corpus.some((entry) => entry.path === UNRECOVERABLE_PDF)).toBe(true);
      expect(acceptable.length).toBe(corpus.length - 2);
    });

    for (const entry of acceptable) {
      const name = entry.path.split('/').pop()!;

      it(`REST upload-pdf accepts ${entry.path} and details show its ${entry.pages} page(s), size and hash`, async () => {
        const bytes = corpusFile(entry.path);
        const before = await countRows();
        const uploaded = expectSuccessEnvelope(
          await uploadPdfRest(alice, { bytes, filename: name, type: 'application/pdf' }),
          alice,
          name,
          'application/pdf',
        );
        expect(await countRows()).toBe(before + 1);
        expect(await countRows(uploaded.client_id)).toBe(1);

        const details = await detailsRest(alice, uploaded.client_id);
        expect(details.status).toBe(200);
        expect(details.body).toMatchObject({ status_code: 200, message: 'Success', success: true });
        expect(details.body.data).toMatchObject({
          client_id: uploaded.client_id,
          user_id: alice.user_id,
          name,
          mime: 'application/pdf',
          kind: 'pdf',
          page_count: entry.pages,
          size_bytes: bytes.length,
          sha256: sha256(bytes),
          width: null,
          height: null,
        });
        const download = await fetch(details.body.data!.download_url);
        expect(download.status).toBe(200);
        expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
      });

      it(`GraphQL uploadPdf accepts ${entry.path} and FileDetails shows its ${entry.pages} page(s), size and hash`, async () => {
        const bytes = corpusFile(entry.path);
        const before = await countRows();
        const response = await uploadPdfGql(alice, { bytes, filename: name, type: 'application/pdf' });
        expect(response.errors).toBeUndefined();
        const uploaded = response.data!.uploadPdf;
        expect(uploaded).toEqual({
          user_id: alice.user_id,
          client_id: expect.stringMatching(/^file_/),
          name,
          mime: 'application/pdf',
        });
        expect(Object.keys(uploaded).sort()).toEqual(UPLOADED_KEYS);
        expect(await countRows()).toBe(before + 1);

        const details = await gql(app, alice.token, FileDetailsDocument, { client_id: uploaded.client_id });
        expect(details.errors).toBeUndefined();
        expect(details.data!.file).toMatchObject({
          client_id: uploaded.client_id,
          kind: 'pdf',
          page_count: entry.pages,
          size_bytes: bytes.length,
          sha256: sha256(bytes),
        });
      });
    }

    it('keeps a file name in any script as browsers send it (UTF-8), the same on both faces', async () => {
      const bytes = corpusFile('001-trivial/minimal-document.pdf');
      const name = 'किरायानामा – முருகன் 2026.pdf';
      const viaRest = await uploadPdfRest(alice, { bytes, filename: name, type: 'application/pdf' });
      expect(viaRest.body.data).toMatchObject({ name });
      expect((await detailsRest(alice, viaRest.body.data!.client_id)).body.data).toMatchObject({ name });
      const viaGraphql = await uploadPdfGql(alice, { bytes, filename: name, type: 'application/pdf' });
      expect(viaGraphql.data!.uploadPdf.name).toBe(name);
    });

    it('refuses the encrypted PDF with invalid_pdf on both faces and stores nothing', async () => {
      const bytes = corpusFile(ENCRYPTED_PDF);
      await expectNoNewRow(async () => {
        expectErrorEnvelope(
          await uploadPdfRest(alice, { bytes, filename: 'protected.pdf', type: 'application/pdf' }),
          400,
          'invalid_pdf',
        );
        expectGraphQLError(await uploadPdfGql(alice, { bytes, filename: 'protected.pdf' }), 'invalid_pdf');
      });
    });

    it('refuses 017-unreadable-meta-data (damaged beyond recovery, see docs/api.md) with invalid_pdf on both faces', async () => {
      const bytes = corpusFile(UNRECOVERABLE_PDF);
      await expectNoNewRow(async () => {
        expectErrorEnvelope(
          await uploadPdfRest(alice, { bytes, filename: 'unreadablemetadata.pdf', type: 'application/pdf' }),
          400,
          'invalid_pdf',
        );
        expectGraphQLError(await uploadPdfGql(alice, { bytes, filename: 'unreadablemetadata.pdf' }), 'invalid_pdf');
      });
    });
  });

  describe('refused PDF uploads', () => {
    it('refuses an empty file with file_empty on both faces', async () => {
      await expectNoNewRow(async () => {
        expectErrorEnvelope(await uploadPdfRest(alice, { bytes: new Uint8Array(0), filename: 'empty.pdf' }), 400, 'file_empty');
        expectGraphQLError(await uploadPdfGql(alice, { bytes: new Uint8Array(0), filename: 'empty.pdf' }), 'file_empty');
      });
    });

    it('refuses a multipart body without a part named file with file_empty', async () => {
      await expectNoNewRow(async () => {
        expectErrorEnvelope(await restUpload(app, '/files/upload-pdf', alice.token, null), 400, 'file_empty');
        // A file under another part name is not the file either.
        expectErrorEnvelope(
          await restUpload(app, '/files/upload-pdf', alice.token, { bytes: MINIMAL_PDF, filename: 'a.pdf' }, 'document'),
          400,
          'file_empty',
        );
      });
    });

    it('refuses text bytes and PNG bytes named .pdf with invalid_pdf on both faces', async () => {
      const png = makePng(8, 8);
      await expectNoNewRow(async () => {
        expectErrorEnvelope(
          await uploadPdfRest(alice, { bytes: TEXT_BYTES, filename: 'notes.pdf', type: 'application/pdf' }),
          400,
          'invalid_pdf',
        );
        expectErrorEnvelope(
          await uploadPdfRest(alice, { bytes: png, filename: 'x.pdf', type: 'application/pdf' }),
          400,
          'invalid_pdf',
        );
        expectGraphQLError(await uploadPdfGql(alice, { bytes: TEXT_BYTES, filename: 'notes.pdf' }), 'invalid_pdf');
        expectGraphQLError(await uploadPdfGql(alice, { bytes: png, filename: 'x.pdf', type: 'application/pdf' }), 'invalid_pdf');
      });
    });
  });

  describe('the 50 MB limit', () => {
    it('accepts a valid PDF of exactly 52,428,800 bytes on both faces', async () => {
      const bytes = paddedPdf(PDF_LIMIT);
      expect(bytes.length).toBe(PDF_LIMIT);
      // The padded file is a valid PDF in its own right.
      expect((await PDFDocument.load(bytes, { updateMetadata: false })).getPageCount()).toBe(1);

      const before = await countRows();
      const uploaded = expectSuccessEnvelope(
        await uploadPdfRest(alice, { bytes, filename: 'exactly-50mb.pdf', type: 'application/pdf' }),
        alice,
        'exactly-50mb.pdf',
        'application/pdf',
      );
      const details = await detailsRest(alice, uploaded.client_id);
      expect(details.body.data).toMatchObject({ size_bytes: PDF_LIMIT, sha256: sha256(bytes), page_count: 1 });

      const viaGraphQL = await uploadPdfGql(alice, { bytes, filename: 'exactly-50mb.pdf' });
      expect(viaGraphQL.errors).toBeUndefined();
      expect(viaGraphQL.data!.uploadPdf).toMatchObject({ name: 'exactly-50mb.pdf', mime: 'application/pdf' });
      expect(await countRows()).toBe(before + 2);
    });

    it('refuses a PDF of 52,428,801 bytes with file_too_large on both faces', async () => {
      const bytes = paddedPdf(PDF_LIMIT + 1);
      expect((await PDFDocument.load(bytes, { updateMetadata: false })).getPageCount()).toBe(1);
      await expectNoNewRow(async () => {
        expectErrorEnvelope(
          await uploadPdfRest(alice, { bytes, filename: 'one-byte-over.pdf', type: 'application/pdf' }),
          400,
          'file_too_large',
        );
        expectGraphQLError(await uploadPdfGql(alice, { bytes, filename: 'one-byte-over.pdf' }), 'file_too_large');
      });
    });

    it('refuses a 200 MB REST upload while it streams, without buffering it in memory', async () => {
      await expectNoNewRow(async () => {
        const result = await streamMultipart(
          app,
          '/api/v1/files/upload-pdf',
          { authorization: `Bearer ${alice.token}` },
          [],
          'file',
          200 * 1024 * 1024,
        );
        expect(result.status).toBe(400);
        expect(result.body).toMatchObject({ data: null, status_code: 400, message: 'file_too_large', success: false });
        expect(result.writtenAtResponse).toBeGreaterThan(PDF_LIMIT);
        expect(result.writtenAtResponse).toBeLessThan(120 * 1024 * 1024);
        expect(result.peakGrowth).toBeLessThan(40 * 1024 * 1024);
      });
    });

    it('refuses a 200 MB GraphQL upload while it streams, without buffering it in memory', async () => {
      await expectNoNewRow(async () => {
        const result = await streamMultipart(
          app,
          '/graphql',
          { authorization: `Bearer ${alice.token}`, 'apollo-require-preflight': 'true' },
          [
            {
              name: 'operations',
              value: JSON.stringify({
                query: 'mutation ($file: Upload!) { uploadPdf(file: $file) { client_id } }',
                variables: { file: null },
              }),
            },
            { name: 'map', value: JSON.stringify({ 0: ['variables.file'] }) },
          ],
          '0',
          200 * 1024 * 1024,
        );
        expect(result.body).toMatchObject({ data: null, errors: [{ extensions: { code: 'file_too_large' } }] });
        expect((result.body.errors as unknown[]).length).toBe(1);
        expect(result.writtenAtResponse).toBeGreaterThan(PDF_LIMIT);
        expect(result.writtenAtResponse).toBeLessThan(120 * 1024 * 1024);
        expect(result.peakGrowth).toBeLessThan(40 * 1024 * 1024);
      });
    });
  });

  describe('assets (JPEG and PNG)', () => {
    it('accepts a real PNG declared as a JPEG, answering the mime of its bytes, with its size in details', async () => {
      const png = makePng(37, 23);
      const uploaded = expectSuccessEnvelope(
        await uploadAssetRest(alice, { bytes: png, filename: 'photo.jpg', type: 'image/jpeg' }),
        alice,
        'photo.jpg',
        'image/png',
      );
      expect(await countRows(uploaded.client_id)).toBe(1);
      const details = await detailsRest(alice, uploaded.client_id);
      expect(details.body.data).toMatchObject({
        kind: 'asset',
        mime: 'image/png',
        width: 37,
        height: 23,
        page_count: null,
        size_bytes: png.length,
        sha256: sha256(png),
      });

      const viaGraphQL = await uploadAssetGql(alice, { bytes: png, filename: 'photo.jpg', type: 'image/jpeg' });
      expect(viaGraphQL.errors).toBeUndefined();
      expect(viaGraphQL.data!.uploadAsset).toEqual({
        user_id: alice.user_id,
        client_id: expect.stringMatching(/^file_/),
        name: 'photo.jpg',
        mime: 'image/png',
      });
      const gqlDetails = await gql(app, alice.token, FileDetailsDocument, { client_id: viaGraphQL.data!.uploadAsset.client_id });
      expect(gqlDetails.data!.file).toMatchObject({ kind: 'asset', mime: 'image/png', width: 37, height: 23, page_count: null });
    });

    it('accepts a real JPEG (from a corpus PDF) declared as a PNG, answering image/jpeg with its size', async () => {
      const jpeg = await jpegFromCorpus('003-pdflatex-image/pdflatex-image.pdf');
      expect(jpeg.bytes.subarray(0, 3).toString('hex')).toBe('ffd8ff');
      const uploaded = expectSuccessEnvelope(
        await uploadAssetRest(alice, { bytes: jpeg.bytes, filename: 'signature.png', type: 'image/png' }),
        alice,
        'signature.png',
        'image/jpeg',
      );
      const details = await detailsRest(alice, uploaded.client_id);
      expect(details.body.data).toMatchObject({
        kind: 'asset',
        mime: 'image/jpeg',
        width: jpeg.width,
        height: jpeg.height,
        size_bytes: jpeg.bytes.length,
        sha256: sha256(jpeg.bytes),
      });
      const download = await fetch(details.body.data!.download_url);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe('image/jpeg');
      expect(Buffer.from(await download.arrayBuffer()).equals(jpeg.bytes)).toBe(true);

      const viaGraphQL = await uploadAssetGql(alice, { bytes: jpeg.bytes, filename: 'face.jpg', type: 'image/jpeg' });
      expect(viaGraphQL.errors).toBeUndefined();
      expect(viaGraphQL.data!.uploadAsset).toMatchObject({ name: 'face.jpg', mime: 'image/jpeg' });
      const gqlDetails = await gql(app, alice.token, FileDetailsDocument, { client_id: viaGraphQL.data!.uploadAsset.client_id });
      expect(gqlDetails.data!.file).toMatchObject({ width: jpeg.width, height: jpeg.height });
    });

    const unsupported: [string, () => UploadFile][] = [
      ['text bytes named x.png', () => ({ bytes: TEXT_BYTES, filename: 'x.png', type: 'image/png' })],
      ['a PDF', () => ({ bytes: MINIMAL_PDF, filename: 'document.png', type: 'image/png' })],
      [
        'a PNG signature followed by garbage',
        () => ({
          bytes: Buffer.concat([makePng(4, 4).subarray(0, 8), randomBytes(512)]),
          filename: 'broken.png',
          type: 'image/png',
        }),
      ],
      ['a GIF', () => ({ bytes: GIF_BYTES, filename: 'anim.gif', type: 'image/gif' })],
    ];
    for (const [what, file] of unsupported) {
      it(`refuses ${what} with the unsupported-format text on REST and invalid_asset on GraphQL`, async () => {
        await expectNoNewRow(async () => {
          expectErrorEnvelope(await uploadAssetRest(alice, file()), 400, ASSET_FORMAT_MESSAGE);
          expectGraphQLError(await uploadAssetGql(alice, file()), 'invalid_asset', ASSET_FORMAT_MESSAGE);
        });
      });
    }

    it('refuses an empty asset with the empty-file text on REST and file_empty on GraphQL', async () => {
      await expectNoNewRow(async () => {
        const empty = { bytes: new Uint8Array(0), filename: 'empty.png', type: 'image/png' };
        expectErrorEnvelope(await uploadAssetRest(alice, empty), 400, ASSET_EMPTY_MESSAGE);
        expectErrorEnvelope(await restUpload(app, '/files/upload-asset', alice.token, null), 400, ASSET_EMPTY_MESSAGE);
        expectGraphQLError(await uploadAssetGql(alice, empty), 'file_empty', ASSET_EMPTY_MESSAGE);
      });
    });
  });

  describe('tenant isolation and listing', () => {
    it("answers not_found for another user's file on REST details and the FileDetails query", async () => {
      const bob = await app.createUser();
      const own = expectSuccessEnvelope(
        await uploadPdfRest(alice, { bytes: MINIMAL_PDF, filename: 'alice-private.pdf' }),
        alice,
        'alice-private.pdf',
        'application/pdf',
      );
      expectErrorEnvelope(await detailsRest(bob, own.client_id), 404, 'not_found');
      expectGraphQLError(await gql(app, bob.token, FileDetailsDocument, { client_id: own.client_id }), 'not_found');
      // Exactly like a file that does not exist at all.
      expectErrorEnvelope(await detailsRest(bob, `file_${randomBytes(16).toString('hex')}`), 404, 'not_found');
      // The owner still sees it.
      expect((await detailsRest(alice, own.client_id)).status).toBe(200);

      const bobs = expectSuccessEnvelope(
        await uploadPdfRest(bob, { bytes: MINIMAL_PDF, filename: 'bob.pdf' }),
        bob,
        'bob.pdf',
        'application/pdf',
      );
      const list = await rest<FilePage>(app, 'GET', '/files/list', { token: bob.token, query: { page: 1, size: 100 } });
      expect(list.status).toBe(200);
      expect(list.body.data!.items.map((item) => item.client_id)).toEqual([bobs.client_id]);
      expect(list.body.data!.items.every((item) => item.user_id === bob.user_id)).toBe(true);
      const gqlList = await gql(app, bob.token, FileListDocument, { page: 1, size: 100 });
      expect(gqlList.data!.files.items.map((item) => item.client_id)).toEqual([bobs.client_id]);
    });

    it('pages the list newest first and filters it by kind', async () => {
      const carol = await app.createUser();
      const ids: string[] = [];
      const files: [string, UploadFile][] = [
        ['/files/upload-pdf', { bytes: MINIMAL_PDF, filename: 'first.pdf' }],
        ['/files/upload-asset', { bytes: makePng(3, 3), filename: 'second.png' }],
        ['/files/upload-pdf', { bytes: MINIMAL_PDF, filename: 'third.pdf' }],
      ];
      for (const [path, file] of files) {
        const response = path.endsWith('pdf') ? await uploadPdfRest(carol, file) : await uploadAssetRest(carol, file);
        expect(response.status).toBe(200);
        ids.push(response.body.data!.client_id);
        await sleep(5); // distinct creation instants, so "newest first" has one answer
      }
      const [first, second, third] = ids;

      const list = (query: Record<string, string | number>) =>
        rest<FilePage>(app, 'GET', '/files/list', { token: carol.token, query });
      const page1 = await list({ page: 1, size: 2 });
      expect(page1.body).toMatchObject({ status_code: 200, message: 'Success', success: true });
      expect(page1.body.data!.items.map((item) => item.client_id)).toEqual([third, second]);
      expect(page1.body.data!.has_next).toBe(true);
      const page2 = await list({ page: 2, size: 2 });
      expect(page2.body.data!.items.map((item) => item.client_id)).toEqual([first]);
      expect(page2.body.data!.has_next).toBe(false);
      const assets = await list({ page: 1, size: 10, kind: 'asset' });
      expect(assets.body.data!.items.map((item) => [item.client_id, item.kind, item.name])).toEqual([
        [second, 'asset', 'second.png'],
      ]);
      expect(assets.body.data!.has_next).toBe(false);
      const pdfs = await list({ page: 1, size: 10, kind: 'pdf' });
      expect(pdfs.body.data!.items.map((item) => item.client_id)).toEqual([third, first]);

      const gqlPage1 = await gql(app, carol.token, FileListDocument, { page: 1, size: 2 });
      expect(gqlPage1.data!.files).toEqual({
        items: [
          { client_id: third, kind: 'pdf', name: 'third.pdf' },
          { client_id: second, kind: 'asset', name: 'second.png' },
        ],
        has_next: true,
      });
      const gqlPage2 = await gql(app, carol.token, FileListDocument, { page: 2, size: 2 });
      expect(gqlPage2.data!.files).toEqual({ items: [{ client_id: first, kind: 'pdf', name: 'first.pdf' }], has_next: false });
      const gqlAssets = await gql(app, carol.token, FileListDocument, { page: 1, size: 10, kind: 'asset' });
      expect(gqlAssets.data!.files.items.map((item) => item.client_id)).toEqual([second]);
    });
  });

  describe('download links', () => {
    let clientId: string;
    let bytes: Buffer;
    let link: string;

    beforeAll(async () => {
      bytes = corpusFile('004-pdflatex-4-pages/pdflatex-4-pages.pdf');
      const uploaded = expectSuccessEnvelope(
        await uploadPdfRest(alice, { bytes, filename: 'four pages.pdf', type: 'application/pdf' }),
        alice,
        'four pages.pdf',
        'application/pdf',
      );
      clientId = uploaded.client_id;
      link = (await detailsRest(alice, clientId)).body.data!.download_url;
    });

    const tokenOf = (url: string) => {
      const parsed = new URL(url);
      const token = parsed.pathname.split('/').pop()!;
      const dot = token.lastIndexOf('.');
      return {
        base: `${parsed.origin}${parsed.pathname.slice(0, -token.length)}`,
        payload: token.slice(0, dot),
        signature: token.slice(dot + 1),
      };
    };
    /** The character at `index` replaced by another base64url character. */
    const changeAt = (text: string, index: number, replacement?: string) => {
      const other = replacement ?? (text[index] === 'A' ? 'B' : 'A');
      return text.slice(0, index) + other + text.slice(index + 1);
    };

    it('serves exactly the uploaded bytes without any token', async () => {
      expect(link.startsWith(`${app.url}/downloads/`)).toBe(true);
      const response = await fetch(link);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/pdf');
      expect(response.headers.get('content-disposition')).toContain('attachment');
      expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);

      const viaGraphQL = await gql(app, alice.token, FileDetailsDocument, { client_id: clientId });
      const fromGraphQL = await fetch(viaGraphQL.data!.file.download_url);
      expect(fromGraphQL.status).toBe(200);
      expect(Buffer.from(await fromGraphQL.arrayBuffer()).equals(bytes)).toBe(true);
    });

    it('refuses a link whose signature was changed with 403 invalid_download_link', async () => {
      const { base, payload, signature } = tokenOf(link);
      const middle = Math.floor(signature.length / 2);
      const response = await fetch(`${base}${payload}.${changeAt(signature, middle)}`);
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ data: null, status_code: 403, message: 'invalid_download_link', success: false });
    });

    it('refuses every change of the last signature character, not only those that alter the decoded bytes', async () => {
      const { base, payload, signature } = tokenOf(link);
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const last = signature.length - 1;
      const statuses = new Set<number>();
      for (const replacement of alphabet) {
        if (replacement === signature[last]) continue;
        const response = await fetch(`${base}${payload}.${changeAt(signature, last, replacement)}`);
        statuses.add(response.status);
        await response.arrayBuffer();
      }
      expect([...statuses]).toEqual([403]);
    });

    it('refuses a link whose grant (payload) was changed with 403 invalid_download_link', async () => {
      const { base, payload, signature } = tokenOf(link);
      const response = await fetch(`${base}${changeAt(payload, 5)}.${signature}`);
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ status_code: 403, message: 'invalid_download_link', success: false });
    });

    it('refuses an expired link with 410 download_link_expired', async () => {
      const rows = await app.services.orm.em
        .fork()
        .getConnection()
        .execute<{ storage_key: string }[]>('select storage_key from files where id = ?', [clientId]);
      const expired = app.services.urls.issue(
        { key: rows[0].storage_key, filename: 'four pages.pdf', contentType: 'application/pdf' },
        10,
        Date.now() - 60_000,
      ).url;
      const response = await fetch(expired);
      expect(response.status).toBe(410);
      expect(await response.json()).toEqual({ data: null, status_code: 410, message: 'download_link_expired', success: false });
      // The same grant, freshly issued, works: only the expiry was refused.
      const fresh = app.services.urls.issue(
        { key: rows[0].storage_key, filename: 'four pages.pdf', contentType: 'application/pdf' },
        10,
      ).url;
      const freshResponse = await fetch(fresh);
      expect(freshResponse.status).toBe(200);
      expect(Buffer.from(await freshResponse.arrayBuffer()).equals(bytes)).toBe(true);
    });
  });

  it('holds a files row for exactly the accepted uploads and none for the refused ones', async () => {
    const rows = await app.services.orm.em.fork().getConnection().execute<{ id: string }[]>('select id from files order by id');
    expect(rows.map((row) => row.id)).toEqual([...accepted].sort());
    expect(accepted.size).toBeGreaterThan(60);
  });
});
