import type { Express, NextFunction, Request, Response } from 'express';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import { errorEnvelope, sendError } from '../rest/envelope';
import { restErrorFromExpress } from '../rest/rest-router';

/** Mounted last: `not_found` for any route no mount took, the REST envelope for errors no mount answered. */
export function mountErrorHandlers(app: Express, log: Logger): void {
  app.use((_req: Request, res: Response) => sendError(res, new AppError('not_found')));
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const known = restErrorFromExpress(error);
    if (known) {
      sendError(res, known);
      return;
    }
    log.error({ err: error }, 'unexpected error');
    if (!res.headersSent) res.status(500).json(errorEnvelope(new AppError('internal_error')));
  });
}
