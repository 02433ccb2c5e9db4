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
 * What the spool holds while the disk catches up. Streams' default 16 KB is under one socket read (64 KB): each read
 * then waited for its own write to finish before the next was taken, 800 waits for a 50 MB upload, each a trip through
 * libuv's thread pool (seconds on a loaded machine). With room for a few reads, receiving and writing overlap.
 */
const SPOOL_BUFFER_BYTES = 1024 * 1024;

/**
 * Streams an upload to a temporary file, hashing as it goes, and stops at the first byte past `limit`:
 * memory stays flat however large the upload is, and an oversized upload is refused while it streams.
 */
export async function spoolToTempFile(source: Readable, limit: number): Promise<SpooledFile> {
  const file = path.join(os.tmpdir(), `esign-upload-${randomBytes(8).toString('hex')}`);
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    highWaterMark: SPOOL_BUFFER_BYTES,
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
    await pipeline(source, meter, createWriteStream(file, { highWaterMark: SPOOL_BUFFER_BYTES }));
  } catch (error) {
    await discard();
    throw error;
  }
  return { path: file, size, sha256: hash.digest('hex'), discard };
}
