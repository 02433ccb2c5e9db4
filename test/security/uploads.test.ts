import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import net from 'node:net';
import { deflateSync } from 'node:zlib';
import { print } from 'graphql';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UploadAssetDocument, UploadPdfDocument } from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { PNG_SIGNATURE, pngChunk } from '../helpers/png';
import { gqlUpload, restUpload, type GraphQLResponse, type RestResponse } from '../helpers/clients';
import { blankPicture, jpegBytes } from '../helpers/faces';
import { MINIMAL_PDF, makePng } from '../helpers/fixtures';
import { makePkcs12 } from '../helpers/pfx';
import { AppError } from '../../src/platform/errors';
import { IMAGE_PIXEL_BUDGET, inspectImage, readImageHeader } from '../../src/modules/files/inspect-image';

/**
 * Abuse of the upload routes with real bytes over a real socket: multipart bodies that stop inside a part
 * (issue 16, item 1) and image bombs (item 2).
 */

// ---------------------------------------------------------------------------------------------------------
// A raw HTTP/1.1 client over node:net: it writes exactly the bytes it is given and can stop, half-close or
// close wherever a misbehaving client would. fetch and http.request cannot send a body shorter than the
// Content-Length they declare.
// ---------------------------------------------------------------------------------------------------------

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  /** The JSON answer; null when the body was not JSON (Node's own `400 Bad Request` to a broken request). */
  body: Record<string, any> | null;
}

/** What the client does after its bytes: FIN and read on, close at once, or keep the socket open and read on. */
type Ending = 'half-close' | 'close' | 'open';

interface RawRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** `Content-Length` to declare (default: the length of `body`), or chunked framing without its last chunk. */
  framing?: { contentLength: number } | 'chunked-unterminated';
  ending: Ending;
}

/** Resolves the parsed answer, or null when the server closed the connection without one. */
function sendRaw(app: TestApp, request: RawRequest): Promise<RawAnswer | null> {
  const { port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(port), allowHalfOpen: true });
    const received: Buffer[] = [];
    let settled = false;
    const settle = (answer: RawAnswer | null, error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(answer);
    };
    const timer = setTimeout(() => settle(null, new Error(`no answer and no close within 20 s for ${request.path}`)), 20_000);
    const tryParse = (final: boolean) => {
      const all = Buffer.concat(received);
      const headEnd = all.indexOf('\r\n\r\n');
      if (headEnd < 0) {
        if (final) settle(null, all.length === 0 ? undefined : new Error(`half an answer: ${all.toString('latin1')}`));
        return;
      }
      const [statusLine, ...headerLines] = all.subarray(0, headEnd).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      const length = headers['content-length'] === undefined ? 0 : Number(headers['content-length']);
      const body = all.subarray(headEnd + 4);
      if (body.length < length) {
        if (final) settle(null, new Error(`answer cut off: ${all.toString('latin1')}`));
        return;
      }
      const status = Number(statusLine.split(' ')[1]);
      if (!(headers['content-type'] ?? '').includes('json')) {
        settle({ status, headers, body: null });
        return;
      }
      settle({ status, headers, body: JSON.parse(body.subarray(0, length).toString('utf8')) });
    };
    socket.on('data', (data: Buffer) => {
      received.push(data);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('close', () => tryParse(true));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may reset a connection whose request it gave up on: that is "no answer", not a failure.
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') tryParse(true);
      else settle(null, error);
    });
    socket.on('connect', () => {
      const framing = request.framing ?? { contentLength: request.body.length };
      const head =
        `POST ${request.path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
        Object.entries(request.headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('') +
        (framing === 'chunked-unterminated' ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${framing.contentLength}\r\n`) +
        '\r\n';
      socket.write(head);
      socket.write(
        framing === 'chunked-unterminated'
          ? Buffer.concat([Buffer.from(`${request.body.length.toString(16)}\r\n`), request.body, Buffer.from('\r\n')])
          : request.body,
      );
      if (request.ending === 'half-close') socket.end();
      // Give the service time to reach the file part (and start spooling it) before the connection drops.
      else if (request.ending === 'close') setTimeout(() => settle(null), 150);
    });
  });
}

interface Part {
  name: string;
  value: Buffer | string;
  filename?: string;
}

/** How the multipart body ends. */
type BodyEnd =
  /** the body stops inside the file part's header, before its content begins */
  | 'inside-header'
  /** the file part's bytes stop halfway: no delimiter, no final boundary */
  | 'inside-file'
  /** the whole file, then a delimiter that is one byte short */
  | 'broken-delimiter'
  /** the whole file and its delimiter, then neither `--` nor a next part: the form never closes */
  | 'no-final-boundary'
  /** well formed */
  | 'complete';

function multipartBody(boundary: string, parts: Part[], end: BodyEnd): Buffer {
  const pieces: Buffer[] = [];
  parts.forEach((part, index) => {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    const last = index === parts.length - 1;
    if (last && end === 'inside-header') {
      pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition.slice(0, 20)}`));
      return;
    }
    pieces.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n` +
          (part.filename ? 'Content-Type: application/octet-stream\r\n' : '') +
          '\r\n',
      ),
    );
    const value = Buffer.from(part.value);
    if (!last || end === 'complete') {
      pieces.push(value, Buffer.from('\r\n'));
      if (last) pieces.push(Buffer.from(`--${boundary}--\r\n`));
      return;
    }
    if (end === 'inside-file') pieces.push(value.subarray(0, Math.floor(value.length / 2)));
    if (end === 'broken-delimiter') pieces.push(value, Buffer.from(`\r\n--${boundary.slice(0, -1)}`));
    if (end === 'no-final-boundary') pieces.push(value, Buffer.from(`\r\n--${boundary}\r\n`));
  });
  return Buffer.concat(pieces);
}

describe('multipart bodies that stop inside a part', () => {
  let app: TestApp;
  let alice: TestUser;
  let pfx: Buffer;

  interface UploadRoute {
    name: string;
    path: string;
    headers: () => Record<string, string>;
    /** The parts, the file part last. */
    parts: () => Part[];
    /** The table an accepted upload adds a row to. */
    table: 'files' | 'pfx_credentials';
    /** GraphQL routes: the mutation, and the id field its answer carries. */
    graphql?: { field: 'uploadPdf' | 'uploadPfx'; idField: 'client_id' | 'pfx_id'; id: RegExp };
  }

  const routes: UploadRoute[] = [
    {
      name: 'upload-pdf',
      path: '/api/v1/files/upload-pdf',
      headers: () => ({ authorization: `Bearer ${alice.token}` }),
      parts: () => [{ name: 'file', filename: 'contract.pdf', value: MINIMAL_PDF }],
      table: 'files',
    },
    {
      name: 'upload-asset',
      path: '/api/v1/files/upload-asset',
      headers: () => ({ authorization: `Bearer ${alice.token}` }),
      parts: () => [{ name: 'file', filename: 'sign.png', value: makePng(40, 20) }],
      table: 'files',
    },
    {
      name: 'pfx/upload',
      path: '/api/v1/pfx/upload',
      headers: () => ({ authorization: `Bearer ${alice.token}` }),
      parts: () => [
        { name: 'password', value: 'secret' },
        { name: 'file', filename: 'seal.pfx', value: pfx },
      ],
      table: 'pfx_credentials',
    },
    {
      name: 'graphql uploadPdf',
      path: '/graphql',
      headers: () => ({ authorization: `Bearer ${alice.token}`, 'apollo-require-preflight': 'true' }),
      parts: () => [
        { name: 'operations', value: JSON.stringify({ query: print(UploadPdfDocument), variables: { file: null } }) },
        { name: 'map', value: JSON.stringify({ 0: ['variables.file'] }) },
        { name: '0', filename: 'contract.pdf', value: MINIMAL_PDF },
      ],
      table: 'files',
      graphql: { field: 'uploadPdf', idField: 'client_id', id: /^file_/ },
    },
    {
      name: 'graphql uploadPfx',
      path: '/graphql',
      headers: () => ({ authorization: `Bearer ${alice.token}`, 'apollo-require-preflight': 'true' }),
      parts: () => [
        {
          name: 'operations',
          value: JSON.stringify({
            query: 'mutation ($file: Upload!, $password: String!) { uploadPfx(file: $file, password: $password) { pfx_id } }',
            variables: { file: null, password: 'secret' },
          }),
        },
        { name: 'map', value: JSON.stringify({ 0: ['variables.file'] }) },
        { name: '0', filename: 'seal.pfx', value: pfx },
      ],
      table: 'pfx_credentials',
      graphql: { field: 'uploadPfx', idField: 'pfx_id', id: /^pfx_/ },
    },
  ];

  const countRows = async (table: string): Promise<number> => {
    const rows = await app.services.orm.em
      .fork()
      .getConnection()
      .execute<{ count: string }[]>(`select count(*) as count from ${table}`);
    return Number(rows[0].count);
  };
  const blobCount = async (): Promise<number> => {
    const storage = app.services.config.storage;
    if (storage.driver !== 'local') return 0;
    const walk = async (dir: string): Promise<number> => {
      let count = 0;
      for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        count += entry.isDirectory() ? await walk(`${dir}/${entry.name}`) : 1;
      }
      return count;
    };
    return walk(storage.dir);
  };

  /** The service still answers, and the broken upload left no row and no blob behind. */
  const expectUnharmed = async (route: UploadRoute, before: { rows: number; blobs: number }) => {
    const health = await fetch(new URL('/healthz', app.url));
    expect(health.status).toBe(200);
    await settle();
    expect(await countRows(route.table)).toBe(before.rows);
    expect(await blobCount()).toBe(before.blobs);
  };

  /** Lets requests the client abandoned finish on the server before rows are counted. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

  const expectNoSuccess = (route: UploadRoute, answer: RawAnswer | null) => {
    if (!answer) return;
    if (route.graphql && answer.status === 200) expect(answer.body?.data?.[route.graphql.field] ?? null).toBeNull();
    else expect(answer.status).toBe(400);
  };

  const expectBadRequest = (route: UploadRoute, answer: RawAnswer | null) => {
    expect(answer).not.toBeNull();
    if (route.graphql) {
      expect(answer!.body?.errors?.[0]?.extensions?.code).toBe('bad_request');
      expect(answer!.body?.data?.[route.graphql.field] ?? null).toBeNull();
      return;
    }
    expect(answer!.status).toBe(400);
    expect(answer!.body).toMatchObject({ data: null, status_code: 400, message: 'bad_request', success: false });
    expect(answer!.body!.errors).toEqual([{ field: 'body', problem: expect.stringMatching(/multipart/) }]);
  };

  beforeAll(async () => {
    app = await startTestApp();
    alice = await app.createUser();
    pfx = makePkcs12({ password: 'secret' });
  });
  afterAll(async () => app?.close());

  for (const route of routes) {
    describe(route.name, () => {
      const send = async (end: BodyEnd, ending: Ending, framing?: RawRequest['framing'] | 'longer') => {
        const boundary = `----raw-${randomBytes(6).toString('hex')}`;
        const body = multipartBody(boundary, route.parts(), end);
        return sendRaw(app, {
          path: route.path,
          headers: { ...route.headers(), 'content-type': `multipart/form-data; boundary=${boundary}` },
          body,
          // 'longer': the head promises more bytes than ever come.
          framing: framing === 'longer' ? { contentLength: body.length + 4096 } : framing,
          ending,
        });
      };
      const snapshot = async () => ({ rows: await countRows(route.table), blobs: await blobCount() });

      it('survives a body cut inside the file part, then a FIN, with more bytes promised', async () => {
        const before = await snapshot();
        // The HTTP request itself is incomplete: Node's HTTP parser refuses it (its own plain 400) or drops it.
        expectNoSuccess(route, await send('inside-file', 'half-close', 'longer'));
        await expectUnharmed(route, before);
      });

      it('survives a body cut inside the file part, then a closed socket', async () => {
        const before = await snapshot();
        expect(await send('inside-file', 'close', 'longer')).toBeNull();
        await expectUnharmed(route, before);
      });

      it('survives chunked framing cut inside the file part, then a FIN', async () => {
        const before = await snapshot();
        expectNoSuccess(route, await send('inside-file', 'half-close', 'chunked-unterminated'));
        await expectUnharmed(route, before);
      });

      it('answers bad_request to a complete HTTP body whose form stops inside the file part (socket kept open)', async () => {
        const before = await snapshot();
        expectBadRequest(route, await send('inside-file', 'open'));
        await expectUnharmed(route, before);
      });

      it("answers bad_request to a complete HTTP body whose form stops inside the file part's header", async () => {
        const before = await snapshot();
        expectBadRequest(route, await send('inside-header', 'open'));
        await expectUnharmed(route, before);
      });

      it('survives the same body followed by a FIN', async () => {
        const before = await snapshot();
        // Node's server takes a FIN as the client going away (no half-open HTTP): the request is aborted.
        expectNoSuccess(route, await send('inside-file', 'half-close'));
        await expectUnharmed(route, before);
      });

      it('answers bad_request to a form whose closing delimiter is malformed (socket open; then with a FIN)', async () => {
        const before = await snapshot();
        expectBadRequest(route, await send('broken-delimiter', 'open'));
        expectNoSuccess(route, await send('broken-delimiter', 'half-close'));
        await expectUnharmed(route, before);
      });

      if (route.graphql) {
        it('survives a form without its final boundary (socket open; then with a FIN)', async () => {
          // graphql-upload-ts hands the file over as soon as its part is delimited, before the form's end:
          // the resolver cannot tell that the form never closed. What matters here is that nothing crashes.
          expect(await send('no-final-boundary', 'open')).not.toBeNull();
          await send('no-final-boundary', 'half-close');
          expect((await fetch(new URL('/healthz', app.url))).status).toBe(200);
          await settle();
        });
      } else {
        it('answers bad_request to a form without its final boundary, though the file part ended (socket open; then with a FIN)', async () => {
          const before = await snapshot();
          expectBadRequest(route, await send('no-final-boundary', 'open'));
          expectNoSuccess(route, await send('no-final-boundary', 'half-close'));
          await expectUnharmed(route, before);
        });
      }

      it('still takes a well-formed upload afterwards, over the same kind of raw socket', async () => {
        const before = await snapshot();
        const answer = await send('complete', 'open');
        expect(answer?.status).toBe(200);
        if (route.graphql) {
          const id = answer!.body?.data?.[route.graphql.field]?.[route.graphql.idField];
          expect(id).toMatch(route.graphql.id);
          // Stored under the id it answered. Not counted: an unclosed form sent just before (above) may still be
          // storing its file, which graphql-upload-ts hands over before the form ends.
          const [row] = await app.services.orm.em
            .fork()
            .getConnection()
            .execute<{ count: string }[]>(`select count(*) as count from ${route.table} where id = ?`, [id]);
          expect(Number(row!.count)).toBe(1);
        } else {
          expect(answer!.body).toMatchObject({ status_code: 200, success: true });
          expect(await countRows(route.table)).toBe(before.rows + 1);
        }
      });
    });
  }

  it('still answers /healthz and a fetch upload after all of it, and logged no fault', async () => {
    expect((await fetch(new URL('/healthz', app.url))).status).toBe(200);
    const response = await restUpload(app, '/files/upload-asset', alice.token, { bytes: makePng(8, 8), filename: 'after.png' });
    expect(response.status).toBe(200);
    // A broken body is the client's fault: no 'unexpected error' (500) was logged for any of it.
    expect(app.logs.filter((line) => (line.level as number) >= 50)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Image bombs: a few bytes that declare a huge bitmap. Headers are written by hand, with tiny bodies; the
// sizes are only ever read from them.
// ---------------------------------------------------------------------------------------------------------

const ASSET_FORMAT_MESSAGE = 'upload failed: unsupported image format (JPEG or PNG only)';

/**
 * A PNG declaring `width` x `height` (grayscale, 1 bit a pixel). `rows: 'all'` deflates every row (all
 * black: a real, decodable image, about 1/8 byte a pixel before deflate's ~1000:1); otherwise the IDAT holds
 * just a few deflated bytes, a body that looks right and decodes to nothing useful.
 */
function png(width: number, height: number, rows: 'all' | 'tiny' = 'tiny'): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // grayscale
  const raw = rows === 'all' ? Buffer.alloc((Math.ceil(width / 8) + 1) * height) : Buffer.alloc(64);
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A PNG from its IHDR fields and chunks, with correct CRCs. */
function pngOf(
  width: number,
  height: number,
  fields: { depth: number; colour: number; interlace?: number },
  chunks: Buffer[],
): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = fields.depth;
  ihdr[9] = fields.colour;
  ihdr[12] = fields.interlace ?? 0;
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr), ...chunks]);
}

/** An Adam7-interlaced 8-bit RGB PNG, its passes built pixel by pixel (pixel (x, y) is [x * 20, y * 30, 99]). */
function interlacedPng(width: number, height: number): Buffer {
  const passes = [
    [0, 0, 8, 8],
    [4, 0, 8, 8],
    [0, 4, 4, 8],
    [2, 0, 4, 4],
    [0, 2, 2, 4],
    [1, 0, 2, 2],
    [0, 1, 1, 2],
  ];
  const raw: number[] = [];
  for (const [x0, y0, dx, dy] of passes) {
    for (let y = y0; y < height; y += dy) {
      const row: number[] = [];
      for (let x = x0; x < width; x += dx) row.push((x * 20) & 255, (y * 30) & 255, 99);
      if (row.length > 0) raw.push(0, ...row); // filter type 0; an empty pass has no rows at all
    }
  }
  return pngOf(width, height, { depth: 8, colour: 2, interlace: 1 }, [
    pngChunk('IDAT', deflateSync(Buffer.from(raw))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** One JPEG marker segment: FF, the marker, the length (counting itself) and the payload. */
function segment(marker: number, payload: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

/** A frame header's payload: 8-bit precision, the size, 3 components. */
function frame(width: number, height: number): Buffer {
  const payload = Buffer.from([8, 0, 0, 0, 0, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  payload.writeUInt16BE(height, 1);
  payload.writeUInt16BE(width, 3);
  return payload;
}

/**
 * A JPEG declaring `width` x `height`: SOI, APP0 (JFIF), COM, DQT, `before` (extra segments), the frame
 * header (SOF0 unless `sof` says otherwise), DHT, SOS and a few bytes of "scan", EOI.
 */
function jpegHeader(width: number, height: number, options: { sof?: number; before?: Buffer[] } = {}): Buffer {
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, Buffer.from('JFIF\0\x01\x01\0\0\x01\0\x01\0\0', 'latin1')),
    segment(0xfe, Buffer.from('made by hand for a test', 'latin1')),
    segment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])),
    ...(options.before ?? []),
    segment(options.sof ?? 0xc0, frame(width, height)),
    segment(0xc4, Buffer.concat([Buffer.from([0]), Buffer.alloc(16, 0), Buffer.from([0])])),
    segment(0xda, Buffer.from([3, 1, 0, 2, 0x11, 3, 0x11, 0, 0x3f, 0])),
    randomBytes(32).map((byte) => (byte === 0xff ? 0 : byte)),
    Buffer.from([0xff, 0xd9]),
  ]);
}

const sinceMs = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/** Refused as an image the service cannot use: AppError invalid_asset with the contract's text. */
async function expectRefused(bytes: Uint8Array, problem?: RegExp): Promise<void> {
  const error = await inspectImage(bytes).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  expect(error).toMatchObject({ code: 'invalid_asset', status: 400, message: ASSET_FORMAT_MESSAGE });
  if (problem) expect((error as AppError).errors?.[0]?.problem).toMatch(problem);
}

describe('the image pixel budget', () => {
  it('is 40 megapixels and 10000 pixels on a side', () => {
    expect(IMAGE_PIXEL_BUDGET).toEqual({ maxPixels: 40_000_000, maxSide: 10_000 });
  });

  it('reads the size from a PNG IHDR and from JPEG frame headers SOF0..SOF15 (not DHT, JPG, DAC)', () => {
    expect(readImageHeader(png(30_000, 30_000))).toEqual({ mime: 'image/png', width: 30_000, height: 30_000 });
    for (const sof of [0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]) {
      expect(readImageHeader(jpegHeader(640, 20_000, { sof }))).toEqual({ mime: 'image/jpeg', width: 640, height: 20_000 });
    }
    // A DHT, a JPG and a DAC segment whose bytes look like a small frame header are skipped, not read.
    const decoys = [0xc4, 0xc8, 0xcc].map((marker) => segment(marker, frame(16, 16)));
    expect(readImageHeader(jpegHeader(20_000, 20_000, { before: decoys }))).toMatchObject({ width: 20_000, height: 20_000 });
    // Fill bytes (any number of 0xFF) before a marker, and standalone markers, are allowed.
    const filled = jpegHeader(1200, 800);
    const sofAt = filled.indexOf(Buffer.from([0xff, 0xc0]));
    const withFill = Buffer.concat([filled.subarray(0, sofAt), Buffer.from([0xff, 0xff, 0xff, 0xd0]), filled.subarray(sofAt)]);
    expect(readImageHeader(withFill)).toMatchObject({ width: 1200, height: 800 });
  });

  it('accepts interlaced PNGs (the data size of each Adam7 pass is checked before pdf-lib decodes)', async () => {
    for (const [width, height] of [
      [1, 1],
      [3, 2],
      [13, 7],
      [40, 33],
    ]) {
      const bytes = interlacedPng(width, height);
      // The generator is right: pngjs reads it back pixel for pixel.
      const decoded = PNG.sync.read(bytes);
      expect(decoded.data[((height - 1) * width + (width - 1)) * 4]).toBe(((width - 1) * 20) & 255);
      expect(decoded.data[((height - 1) * width + (width - 1)) * 4 + 1]).toBe(((height - 1) * 30) & 255);
      expect(await inspectImage(bytes)).toEqual({ mime: 'image/png', width, height });
    }
  });

  it("reads real encoders' output the same as the decoders do", () => {
    const real = jpegBytes(blankPicture(33, 17, (x, y) => [x * 7, y * 13, 90]));
    expect(readImageHeader(real)).toEqual({ mime: 'image/jpeg', width: 33, height: 17 });
    expect(readImageHeader(makePng(37, 23))).toEqual({ mime: 'image/png', width: 37, height: 23 });
  });

  const bombs: [string, () => Buffer, string][] = [
    ['a PNG declaring 30000 x 30000', () => png(30_000, 30_000), '30000 x 30000'],
    ['a PNG declaring 12000 x 12000', () => png(12_000, 12_000), '12000 x 12000'],
    ['a JPEG declaring 20000 x 20000', () => jpegHeader(20_000, 20_000), '20000 x 20000'],
    ['a progressive JPEG (SOF2) declaring 20000 x 20000', () => jpegHeader(20_000, 20_000, { sof: 0xc2 }), '20000 x 20000'],
    [
      'a JPEG declaring 20000 x 20000 behind DHT/JPG/DAC decoys',
      () => jpegHeader(20_000, 20_000, { before: [0xc4, 0xc8, 0xcc].map((m) => segment(m, frame(16, 16))) }),
      '20000 x 20000',
    ],
    ['a PNG of 8000 x 5001 (one row over 40 megapixels)', () => png(8000, 5001), '8000 x 5001'],
    ['a PNG of 10001 x 1 (one pixel over the side)', () => png(10_001, 1), '10001 x 1'],
    ['a JPEG of 1 x 10001', () => jpegHeader(1, 10_001), '1 x 10001'],
  ];
  for (const [what, bytes, size] of bombs) {
    it(`refuses ${what} from its header`, async () => {
      await expectRefused(bytes(), new RegExp(`declares ${size} pixels`));
    });
  }

  it('refuses a real, decodable 30000 x 30000 PNG bomb (109 KB) at once: nothing is decoded', async () => {
    const bomb = png(30_000, 30_000, 'all');
    expect(bomb.length).toBeLessThan(200_000);
    const start = process.hrtime.bigint();
    await expectRefused(bomb, /declares 30000 x 30000 pixels/);
    // Measured, not asserted (wall clock on a shared machine): pdf-lib's decode took ~110 s and 7 GB before.
    console.log(
      `image bomb: inspectImage refused a ${bomb.length}-byte PNG declaring 30000 x 30000 in ${sinceMs(start).toFixed(2)} ms`,
    );
  });

  const broken: [string, () => Buffer][] = [
    ['a PNG signature alone', () => PNG_SIGNATURE],
    ['a PNG cut inside its IHDR', () => png(100, 100).subarray(0, 20)],
    ['a PNG whose first chunk is not IHDR', () => Buffer.concat([PNG_SIGNATURE, pngChunk('IDAT', Buffer.alloc(13))])],
    ['a PNG whose IHDR has the wrong length', () => Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', Buffer.alloc(14, 1))])],
    ['a PNG declaring 0 x 100', () => png(0, 100)],
    ['a PNG declaring 2^32 - 1 pixels on a side', () => png(0xffffffff, 1)],
    // pdf-lib's PNG decoder (UPNG, its own inflate without bounds checks) looped forever on the next two.
    ['a PNG cut inside its image data', () => makePng(12, 9).subarray(0, 44)],
    [
      'a PNG whose image data is garbage',
      () =>
        pngOf(12, 9, { depth: 8, colour: 2 }, [
          pngChunk('IDAT', Buffer.concat([Buffer.from([0x78, 0x9c]), randomBytes(60)])),
          pngChunk('IEND', Buffer.alloc(0)),
        ]),
    ],
    [
      'a PNG with a wrong chunk CRC',
      () => {
        const bytes = makePng(12, 9);
        bytes[bytes.length - 20] ^= 0x55;
        return bytes;
      },
    ],
    [
      'a PNG without IEND',
      () => {
        const bytes = makePng(12, 9);
        return bytes.subarray(0, bytes.length - 12);
      },
    ],
    ['a PNG without image data', () => pngOf(12, 9, { depth: 8, colour: 2 }, [pngChunk('IEND', Buffer.alloc(0))])],
    [
      'a PNG with more image data than its header declares',
      () =>
        pngOf(10, 10, { depth: 8, colour: 2 }, [
          pngChunk('IDAT', deflateSync(Buffer.alloc(31 * 1000))),
          pngChunk('IEND', Buffer.alloc(0)),
        ]),
    ],
    [
      'a PNG with less image data than its header declares',
      () =>
        pngOf(10, 10, { depth: 8, colour: 2 }, [
          pngChunk('IDAT', deflateSync(Buffer.alloc(31 * 9))),
          pngChunk('IEND', Buffer.alloc(0)),
        ]),
    ],
    [
      'an animated PNG (APNG frames declare sizes of their own)',
      () =>
        pngOf(10, 10, { depth: 8, colour: 2 }, [
          pngChunk('acTL', Buffer.alloc(8)),
          pngChunk('fcTL', Buffer.alloc(26)),
          pngChunk('IDAT', deflateSync(Buffer.alloc(31 * 10))),
          pngChunk('IEND', Buffer.alloc(0)),
        ]),
    ],
    [
      'an indexed-colour PNG without a palette',
      () =>
        pngOf(10, 10, { depth: 8, colour: 3 }, [
          pngChunk('IDAT', deflateSync(Buffer.alloc(11 * 10))),
          pngChunk('IEND', Buffer.alloc(0)),
        ]),
    ],
    [
      'a PNG with an impossible bit depth',
      () =>
        pngOf(10, 10, { depth: 3, colour: 2 }, [
          pngChunk('IDAT', deflateSync(Buffer.alloc(31 * 10))),
          pngChunk('IEND', Buffer.alloc(0)),
        ]),
    ],
    ['a JPEG SOI alone', () => Buffer.from([0xff, 0xd8, 0xff])],
    ['a JPEG cut inside APP0', () => jpegHeader(100, 100).subarray(0, 12)],
    [
      'a JPEG cut inside its frame header',
      () => {
        const j = jpegHeader(100, 100);
        return j.subarray(0, j.indexOf(Buffer.from([0xff, 0xc0])) + 6);
      },
    ],
    ['a JPEG whose APP0 length points past the end', () => Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0xff, 0xf0, 0x4a, 0x46])],
    [
      'a JPEG with a segment length of 0',
      () => Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x00, 0xff, 0xc0, 0, 11, 8, 0, 16, 0, 16, 1]),
    ],
    ['a JPEG with a segment length of 1', () => Buffer.from([0xff, 0xd8, 0xff, 0xfe, 0x00, 0x01, 0xff, 0xd9])],
    [
      'a JPEG whose scan comes before any frame header',
      () => Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02, 1, 2, 3, 0xff, 0xd9]),
    ],
    ['a JPEG that ends before any frame header', () => Buffer.from([0xff, 0xd8, 0xff, 0xfe, 0x00, 0x03, 0x41, 0xff, 0xd9])],
    [
      'a JPEG with garbage where a marker must be',
      () => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xfe, 0x00, 0x03, 0x41]), randomBytes(64).fill(0x41, 0, 1)]),
    ],
    [
      'a JPEG with a stuffed byte (FF 00) outside a scan',
      () => Buffer.from([0xff, 0xd8, 0xff, 0x00, 0xff, 0xc0, 0, 11, 8, 0, 16, 0, 16, 1]),
    ],
    ['a JPEG frame header declaring height 0 (DNL)', () => jpegHeader(640, 0)],
    ['a JPEG that is 0xFF to the end', () => Buffer.concat([Buffer.from([0xff, 0xd8]), Buffer.alloc(1000, 0xff)])],
    // pdf-lib's looser marker walk reads this DAC segment as the frame header (16 x 16) while the real one
    // says 64 x 48: the two readings disagree and the image is refused rather than drawn at the wrong size.
    ['a JPEG that pdf-lib would read another size from', () => jpegHeader(64, 48, { before: [segment(0xcc, frame(16, 16))] })],
  ];
  for (const [what, bytes] of broken) {
    it(`refuses ${what} cleanly`, async () => {
      await expectRefused(bytes());
    });
  }

  it('refuses every truncation of a valid PNG and JPEG cleanly (never another exception, never a hang)', async () => {
    for (const whole of [makePng(12, 9), interlacedPng(9, 5), jpegBytes(blankPicture(12, 9, () => [10, 200, 30]))]) {
      for (let length = 0; length < Math.min(whole.length, 700); length++) {
        const outcome = await inspectImage(whole.subarray(0, length)).then(
          () => 'accepted',
          (error: unknown) => (error instanceof AppError && error.code === 'invalid_asset' ? 'refused' : error),
        );
        // pdf-lib embeds a JPEG without decoding its scan: a JPEG cut after its frame header may pass. A PNG
        // is whole or refused.
        expect(whole[0] === 0xff ? ['refused', 'accepted'] : ['refused']).toContain(outcome);
      }
    }
  });

  it('accepts images at the edge of the budget: a real 8000 x 5000 PNG, a 10000 x 4000 JPEG, a 10000 x 1 PNG', async () => {
    const edgePng = png(8000, 5000, 'all');
    let start = process.hrtime.bigint();
    expect(await inspectImage(edgePng)).toEqual({ mime: 'image/png', width: 8000, height: 5000 });
    console.log(
      `image budget edge: an 8000 x 5000 PNG (${edgePng.length} bytes) was decoded and accepted in ${sinceMs(start).toFixed(0)} ms`,
    );
    const edgeJpeg = jpeg.encode({ width: 10_000, height: 4000, data: Buffer.alloc(10_000 * 4000 * 4, 180) }, 40).data;
    start = process.hrtime.bigint();
    expect(await inspectImage(edgeJpeg)).toEqual({ mime: 'image/jpeg', width: 10_000, height: 4000 });
    console.log(
      `image budget edge: a 10000 x 4000 JPEG (${edgeJpeg.length} bytes) was accepted in ${sinceMs(start).toFixed(0)} ms`,
    );
    expect(await inspectImage(makePng(10_000, 1))).toEqual({ mime: 'image/png', width: 10_000, height: 1 });
  });
});

describe('image bombs sent to upload-asset', () => {
  let app: TestApp;
  let alice: TestUser;

  beforeAll(async () => {
    app = await startTestApp();
    alice = await app.createUser();
  });
  afterAll(async () => app?.close());

  const countFiles = async (): Promise<number> => {
    const rows = await app.services.orm.em
      .fork()
      .getConnection()
      .execute<{ count: string }[]>('select count(*) as count from files');
    return Number(rows[0].count);
  };

  const expectRestRefusal = (response: RestResponse, size: string) => {
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ data: null, status_code: 400, message: ASSET_FORMAT_MESSAGE, success: false });
    expect(response.body.errors).toEqual([{ field: 'file', problem: expect.stringContaining(`declares ${size} pixels`) }]);
  };
  const expectGraphQLRefusal = (response: GraphQLResponse<unknown>) => {
    expect(response.data ?? null).toBeNull();
    expect(response.errors?.[0]).toMatchObject({ message: ASSET_FORMAT_MESSAGE, extensions: { code: 'invalid_asset' } });
  };

  const cases: [string, () => Buffer, string, string][] = [
    ['a real 30000 x 30000 PNG bomb', () => png(30_000, 30_000, 'all'), '30000 x 30000', 'bomb.png'],
    ['a PNG header declaring 30000 x 30000', () => png(30_000, 30_000), '30000 x 30000', 'header.png'],
    ['a PNG header declaring 12000 x 12000', () => png(12_000, 12_000), '12000 x 12000', 'big.png'],
    ['a JPEG header declaring 20000 x 20000', () => jpegHeader(20_000, 20_000), '20000 x 20000', 'big.jpg'],
  ];
  for (const [what, bytes, size, filename] of cases) {
    it(`refuses ${what} on REST and GraphQL, quickly, storing nothing`, async () => {
      const before = await countFiles();
      const file = { bytes: bytes(), filename, type: 'image/png' };
      const start = process.hrtime.bigint();
      const response = await restUpload(app, '/files/upload-asset', alice.token, file);
      const elapsed = sinceMs(start);
      expectRestRefusal(response, size);
      console.log(`image bomb: REST upload-asset refused ${what} (${file.bytes.length} bytes) in ${elapsed.toFixed(1)} ms`);
      expectGraphQLRefusal(await gqlUpload(app, alice.token, UploadAssetDocument, file));
      expect(await countFiles()).toBe(before);
      expect((await fetch(new URL('/healthz', app.url))).status).toBe(200);
    });
  }

  it('still accepts a 10000 x 1 PNG and a real photo-sized JPEG', async () => {
    const wide = await restUpload(app, '/files/upload-asset', alice.token, { bytes: makePng(10_000, 1), filename: 'wide.png' });
    expect(wide.status).toBe(200);
    const photo = jpeg.encode({ width: 4000, height: 3000, data: Buffer.alloc(4000 * 3000 * 4, 120) }, 50).data;
    const response = await restUpload(app, '/files/upload-asset', alice.token, { bytes: photo, filename: 'photo.jpg' });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ mime: 'image/jpeg' });
  });
});
