import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { AppError } from '../errors';
import { sendError } from '../rest/envelope';
import type { BlobStore } from '../storage/blob-store';
import type { UrlSigner } from '../storage/signed-urls';

/** Answers a signed download link with the blob's bytes, or the envelope of why not. */
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
  const stat = await services.blobs.stat(grant.key);
  if (!stat) return sendError(res, new AppError('not_found'));
  res.status(200);
  res.setHeader('Content-Type', grant.contentType);
  res.setHeader('Content-Length', String(stat.size));
  res.setHeader('Content-Disposition', contentDisposition(grant.filename));
  res.setHeader('Cache-Control', 'private, no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  await pipeline(await services.blobs.getStream(grant.key), res);
}

function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
