import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { AppError } from '../errors';
import { sendError } from '../rest/envelope';
import type { BlobStore } from '../storage/blob-store';
import type { BundleEntry, UrlSigner } from '../storage/signed-urls';
import { zipOfBlobs } from '../storage/zip-bundle';

/** Answers a signed download link with the blob's bytes (or the ZIP of its blobs), or the envelope of why not. */
export async function serveDownload(
  services: { urls: UrlSigner; blobs: BlobStore },
  token: string,
  res: Response,
): Promise<void> {
  let grant;
  try {
    grant = services.urls.verify(token);
  } catch (error) {
    if (error instanceof AppError) return sendError(res, error);
    return sendError(res, new AppError('invalid_download_link'));
  }
  if (grant.entries) return serveBundle(services.blobs, grant.entries, grant, res);
  const stat = await services.blobs.stat(grant.key);
  if (!stat) return sendError(res, new AppError('not_found'));
  res.status(200);
  res.setHeader('Content-Type', grant.contentType);
  res.setHeader('Content-Length', String(stat.size));
  downloadHeaders(res, grant.filename);
  await pipeline(await services.blobs.getStream(grant.key), res);
}

/**
 * A ZIP of the grant's blobs, streamed as it is made (zip-bundle.ts): no Content-Length, chunked. Every blob is
 * checked first, so a missing one is a 404 envelope rather than a cut archive; a read that fails midway ends the
 * response without its closing chunk, so that no client takes a truncated archive for a whole one.
 */
async function serveBundle(
  blobs: BlobStore,
  entries: BundleEntry[],
  grant: { filename: string; contentType: string },
  res: Response,
): Promise<void> {
  for (const entry of entries) if (!(await blobs.stat(entry.key))) return sendError(res, new AppError('not_found'));
  res.status(200);
  res.setHeader('Content-Type', grant.contentType);
  downloadHeaders(res, grant.filename);
  await pipeline(Readable.from(zipOfBlobs(blobs, entries), { objectMode: false }), res);
}

function downloadHeaders(res: Response, filename: string): void {
  res.setHeader('Content-Disposition', contentDisposition(filename));
  res.setHeader('Cache-Control', 'private, no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
