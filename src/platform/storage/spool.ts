import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface SpooledFile {
  path: string;
  size: number;
  sha256: string;
  /** Removes the temporary file; safe to call more than once. */
  discard(): Promise<void>;
}

export class SpoolLimitExceeded extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
  }
}

/**
 * Streams an upload to a temporary file, hashing as it goes, and stops at the first byte past `limit`:
 * memory stays flat however large the upload is, and an oversized upload is refused while it streams.
 */
export async function spoolToTempFile(source: Readable, limit: number): Promise<SpooledFile> {
  const file = path.join(os.tmpdir(), `esign-upload-${randomBytes(8).toString('hex')}`);
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > limit) {
        callback(new SpoolLimitExceeded(limit));
        return;
      }
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  const discard = () => rm(file, { force: true });
  try {
    await pipeline(source, meter, createWriteStream(file));
  } catch (error) {
    await discard();
    throw error;
  }
  return { path: file, size, sha256: hash.digest('hex'), discard };
}
