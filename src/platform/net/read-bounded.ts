/** An answer larger than the reader would hold. */
export class AnswerTooLarge extends Error {
  override name = 'AnswerTooLarge';
  constructor(readonly limit: number) {
    super(`answer larger than ${limit} bytes`);
  }
}

/**
 * The body of a fetch response, read up to `limit` bytes: a peer that sends more (whatever its Content-Length says)
 * is cut off at the first byte over, and nothing beyond the limit is ever held.
 */
export async function readBounded(response: Response, limit: number): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > limit) {
    await response.body?.cancel();
    throw new AnswerTooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  for (let part = await reader?.read(); part && !part.done; part = await reader!.read()) {
    size += part.value.length;
    if (size > limit) {
      await reader!.cancel();
      throw new AnswerTooLarge(limit);
    }
    chunks.push(Buffer.from(part.value));
  }
  return Buffer.concat(chunks);
}
