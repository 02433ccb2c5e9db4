import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { logScope, type Logger } from './logger';

const REQUEST_ID = /^[A-Za-z0-9_\-.:]{1,100}$/;

/** Signer links and download grants are credentials in a path: logs keep the route, not the secret. */
export function redactCredentialsInUrl(url: string): string {
  return url.replace(/\/(sign|downloads)\/[^/?#]+/g, '/$1/[redacted]');
}

/**
 * Names each request (a sane incoming `x-request-id`, else a new UUID, echoed in the answer), runs it in the
 * log scope so that every line it causes carries `req_id`, and logs how it ended: `info` when answered, `error`
 * for a 5xx, `info` "request aborted" when the client left first (that is not a fault of ours).
 * pino-http did this with a child logger per request whose bindings (the request, serialised and redacted)
 * were built even when nothing was logged, and cost more than a cheap read; here a line is built only when written.
 */
export function requestLogger(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('x-request-id', id);
    const started = performance.now();
    const ended = () => {
      res.off('finish', ended);
      res.off('close', ended);
      const answered = res.writableFinished;
      const level = answered && res.statusCode >= 500 ? 'error' : 'info';
      if (!log.isLevelEnabled(level)) return;
      const message = !answered ? 'request aborted' : level === 'error' ? 'request errored' : 'request completed';
      log[level](
        {
          // 'close' of an aborted request may fire outside the request's scope, so the id is given here too.
          req_id: id,
          req: { id, method: req.method, url: redactCredentialsInUrl(req.originalUrl) },
          res: answered ? { status: res.statusCode } : undefined,
          responseTime: Math.round(performance.now() - started),
        },
        message,
      );
    };
    res.on('finish', ended);
    res.on('close', ended);
    logScope.run({ req_id: id }, next);
  };
}
