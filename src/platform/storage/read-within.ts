import { SpoolLimitExceeded } from './spool';

/**
 * Reads a small upload into memory, stopping at the first byte over `limit` (SpoolLimitExceeded): a use case
 * that keeps a file in memory states its own limit and never holds more than that.
 */
export async function readWithin(content: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of content) {
    size += chunk.length;
    if (size > limit) throw new SpoolLimitExceeded(limit);
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  }
  return Buffer.concat(chunks, size);
}
