import type { Request } from 'express';
import busboy from 'busboy';
import { AppError } from '../errors';
import type { IncomingFile } from '../../modules/files/upload-file';

export interface ReceivedFile extends IncomingFile {
  /** Stops reading the request once the handler is done (an early refusal must not wait for the rest). */
  release(): void;
}

/**
 * Hands over the multipart part named `field` as a stream, as soon as it begins; the caller's service
 * reads it (and enforces the size limit) while it arrives. Resolves null when there is no such part.
 */
export function receiveMultipartFile(req: Request, field = 'file'): Promise<ReceivedFile | null> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 5, fields: 50, fieldSize: 64 * 1024, parts: 60 } });
    } catch {
      // Not multipart/form-data at all: there is no file.
      req.resume();
      resolve(null);
      return;
    }
    const release = () => {
      req.unpipe(parser);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      req.resume();
    };
    let found = false;
    parser.on('file', (name, stream, info) => {
      if (name !== field || found) {
        stream.resume();
        return;
      }
      found = true;
      parser.on('error', (error) =>
        stream.destroy(new AppError('bad_request', { message: 'malformed multipart body', cause: error })),
      );
      resolve({ filename: info.filename, stream, release });
    });
    parser.on('error', (error) => {
      if (!found) {
        release();
        reject(new AppError('bad_request', { message: 'malformed multipart body', cause: error }));
      }
    });
    parser.on('close', () => {
      if (!found) resolve(null);
    });
    req.on('aborted', () => parser.destroy());
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
    parser.on('field', (name, value) => {
      form.fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
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
    parser.on('error', (error) => reject(new AppError('bad_request', { message: 'malformed multipart body', cause: error })));
    parser.on('close', () => {
      if (tooLarge) reject(new AppError('file_too_large', { errors: [{ field, problem: `larger than ${maxFileBytes} bytes` }] }));
      else resolve(form);
    });
    req.pipe(parser);
  });
}
