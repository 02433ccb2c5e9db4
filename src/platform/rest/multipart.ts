import type { Readable } from 'node:stream';
import type { Request } from 'express';
import busboy from 'busboy';
import { AppError } from '../errors';

/** A file part as an upload reads it, whichever face it came through. */
export interface IncomingFile {
  filename: string | undefined;
  stream: Readable;
  /**
   * Settles when the whole request body has been read: rejected (`bad_request`) when the form turned out
   * malformed after the file part. Nothing is kept before it is fulfilled. Absent: the transport checks.
   */
  complete?: Promise<void>;
}

export interface ReceivedFile extends IncomingFile {
  /** Stops reading the request once the handler is done (an early refusal must not wait for the rest). */
  release(): void;
  /** The text fields sent before the file part (a form's fields come in the order the client wrote them). */
  fields: Record<string, string>;
}

/**
 * `400 bad_request` naming the body, for a multipart body that is not well formed: it ends inside a part
 * (busboy: "Unexpected end of form" / "Unexpected end of file"), has a malformed part header, or the
 * client went away before its end.
 */
export function malformedMultipart(cause: unknown): AppError {
  if (cause instanceof AppError) return cause;
  const reason = cause instanceof Error && cause.message ? cause.message.toLowerCase() : 'unreadable';
  return new AppError('bad_request', { errors: [{ field: 'body', problem: `malformed multipart body: ${reason}` }], cause });
}

const ignore = () => undefined;

/**
 * Every stream of one multipart request has its errors handled here, whatever goes wrong and whenever: an
 * unhandled 'error' event (a part stream busboy destroys when the body ends early) would end the process.
 * `fail` runs once: it stops reading the request (draining what is left, so an answer can still go out),
 * destroys the parser and its part streams, and hands the refusal to `onFailure`.
 */
function guardParser(req: Request, parser: busboy.Busboy, onFailure: (refusal: AppError) => void) {
  let done = false;
  const stop = () => {
    req.unpipe(parser);
    parser.destroy();
    // Read and drop the rest: the answer can then be sent on a connection that stays usable.
    req.resume();
  };
  const fail = (error: unknown) => {
    if (done) return;
    done = true;
    stop();
    onFailure(malformedMultipart(error));
  };
  // 'on', not 'once': busboy can report more than one error for one body (a malformed part header and then
  // the unexpected end of the form), and each must be handled.
  parser.on('error', fail);
  // The client went away (or sent a half-close, which Node's server treats the same) before the body ended.
  const gone = () => fail(new Error('the client closed the connection before the end of the body'));
  req.on('aborted', gone);
  req.on('close', () => {
    if (!req.complete) gone();
  });
  // Node emits an IncomingMessage's 'error' only when it has a listener; with one it must be handled here.
  req.on('error', fail);
  return {
    /** The parser finished: the body was complete and well formed. */
    finish: () => {
      done = true;
    },
    /** The handler is done with the request: stop reading it, ignore what the parser still reports. */
    release: () => {
      if (done) return;
      done = true;
      stop();
    },
  };
}

/** What the parser and the file part's stream hold while the spool catches up. */
const STREAM_BUFFER_BYTES = 1024 * 1024;

/**
 * Hands over the multipart part named `field` as a stream, as soon as it begins; the caller's service
 * reads it (and enforces the size limit) while it arrives. Resolves null when there is no such part.
 *
 * `complete` settles when the whole body has been read: fulfilled when it was a well-formed form, rejected
 * with `bad_request` when it was not. The file part can end well and the form still be broken after it (no
 * final boundary, a truncated next part): the service awaits `complete` before it keeps anything.
 */
export function receiveMultipartFile(req: Request, field = 'file'): Promise<ReceivedFile | null> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // Browsers send a file name as UTF-8 bytes (busboy would read them as latin1, as graphql-upload does not).
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        // Room for a few socket reads in the parser and the part's stream (streams' default 16 KB is under one):
        // receiving overlaps writing the spool instead of pausing the socket at every read.
        highWaterMark: STREAM_BUFFER_BYTES,
        fileHwm: STREAM_BUFFER_BYTES,
        limits: { files: 5, fields: 50, fieldSize: 64 * 1024, parts: 60 },
      });
    } catch {
      // Not multipart/form-data at all: there is no file.
      req.resume();
      resolve(null);
      return;
    }
    let settleComplete!: { resolve: () => void; reject: (error: AppError) => void };
    const complete = new Promise<void>((resolveComplete, rejectComplete) => {
      settleComplete = { resolve: resolveComplete, reject: rejectComplete };
    });
    // Nobody awaits it after an early refusal (the handler released the request): no unhandled rejection.
    complete.catch(ignore);

    let found = false;
    const fields: Record<string, string> = {};
    parser.on('field', (name, value) => {
      if (!found) fields[name] = value;
    });
    const guard = guardParser(req, parser, (refusal) => {
      settleComplete.reject(refusal);
      // Before the part began this is the answer; after, the part stream fails (busboy destroys it) and
      // `complete` says why.
      reject(refusal);
    });
    parser.on('file', (name, stream, info) => {
      // Always a listener, before anything else can happen to the stream: busboy destroys an unfinished part
      // stream with an error when the body ends early. The failure itself is reported once, by the parser.
      stream.on('error', ignore);
      if (name !== field || found) {
        stream.resume();
        return;
      }
      found = true;
      resolve({ filename: info.filename, stream, complete, release: guard.release, fields: { ...fields } });
    });
    parser.on('finish', () => {
      guard.finish();
      settleComplete.resolve();
      if (!found) resolve(null);
    });
    req.pipe(parser);
  });
}

export interface SmallForm {
  fields: Record<string, string>;
  file: { filename: string; bytes: Buffer } | null;
}

/**
 * Reads a whole small multipart form (fields and one file part named `field`) into memory; for uploads that
 * are small by nature, such as a PKCS#12 file with its password. Over `maxFileBytes`: `file_too_large`.
 * Resolves only once the whole form has been read and was well formed; otherwise `bad_request`.
 */
export function receiveSmallForm(req: Request, maxFileBytes: number, field = 'file'): Promise<SmallForm> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 5, fields: 20, fieldSize: 4096, fileSize: maxFileBytes + 1 } });
    } catch {
      req.resume();
      resolve({ fields: {}, file: null });
      return;
    }
    const form: SmallForm = { fields: {}, file: null };
    let tooLarge = false;
    const guard = guardParser(req, parser, reject);
    parser.on('field', (name, value) => {
      form.fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      // See receiveMultipartFile: the parser reports the failure; the part stream must not crash the process.
      stream.on('error', ignore);
      if (name !== field || form.file) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => {
        tooLarge = true;
      });
      stream.on('end', () => {
        form.file = { filename: info.filename ?? 'certificate.pfx', bytes: Buffer.concat(chunks) };
      });
    });
    parser.on('finish', () => {
      guard.finish();
      if (tooLarge) reject(new AppError('file_too_large', { errors: [{ field, problem: `larger than ${maxFileBytes} bytes` }] }));
      else resolve(form);
    });
    req.pipe(parser);
  });
}
