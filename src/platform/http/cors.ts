import type { NextFunction, Request, Response } from 'express';

const ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'idempotency-key',
  'apollo-require-preflight',
  'x-apollo-operation-name',
];
const EXPOSED_HEADERS = ['retry-after', 'ratelimit', 'ratelimit-policy'];

/**
 * Cross-origin calls to the two faces (`/graphql`, `/api/v1`) from any site. Both authenticate with a bearer token in
 * a header, never a cookie, so a page elsewhere can only act with a token it holds itself (a browser token its server
 * minted, docs/tokens.md): allowing the origin grants nothing more. A preflight is answered at once (204).
 */
export function allowCrossOrigin(req: Request, res: Response, next: NextFunction): void {
  if (!req.headers.origin) return next();
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS.join(', '));
  if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE');
    res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS.join(', '));
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
    return;
  }
  next();
}
