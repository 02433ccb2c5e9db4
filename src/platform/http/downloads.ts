import type express from 'express';
import { ratePolicies, takeRequest } from '../rate-limit/enforce';
import type { AppServices } from '../services';
import { DOWNLOAD_PATH } from '../storage/signed-urls';
import { serveDownload } from './serve-download';

/** Serves the signed download links (`DOWNLOAD_PATH/:token`). */
export function mountDownloads(app: express.Express, services: AppServices): void {
  const policies = ratePolicies(services.config);
  app.get(`${DOWNLOAD_PATH}/:token`, (req, res, next) => {
    // A signed link is its own credential: its quota is the client address's.
    try {
      takeRequest(services.rateLimiter, policies.address, req.ip ?? 'unknown', res);
    } catch (error) {
      next(error);
      return;
    }
    serveDownload(services, String(req.params.token), res).catch(next);
  });
}
