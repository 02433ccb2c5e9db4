import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import net from 'node:net';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UploadPdfDocument } from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { restUpload } from '../helpers/clients';
import { MINIMAL_PDF, makePng } from '../helpers/fixtures';
import { makePkcs12 } from '../helpers/pfx';

/**
 * Abuse of the upload routes with real bytes over a real socket: multipart bodies that stop inside a part
 * (issue 16, item 1).
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
    graphql?: true;
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
      graphql: true,
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
    if (route.graphql && answer.status === 200) expect(answer.body?.data?.uploadPdf ?? null).toBeNull();
    else expect(answer.status).toBe(400);
  };

  const expectBadRequest = (route: UploadRoute, answer: RawAnswer | null) => {
    expect(answer).not.toBeNull();
    if (route.graphql) {
      expect(answer!.body?.errors?.[0]?.extensions?.code).toBe('bad_request');
      expect(answer!.body?.data?.uploadPdf ?? null).toBeNull();
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
        if (route.graphql) expect(answer!.body?.data?.uploadPdf?.client_id).toMatch(/^file_/);
        else expect(answer!.body).toMatchObject({ status_code: 200, success: true });
        expect(await countRows(route.table)).toBe(before.rows + 1);
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
