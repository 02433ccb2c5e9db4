import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';

/** Where a request came from, for audit trails. */
export interface RequestOrigin {
  ip: string | null;
  userAgent: string | null;
}

/** `req.ip` honours TRUST_PROXY, so a forwarded address counts only behind a trusted proxy. */
export function requestOrigin(req: Request): RequestOrigin {
  return { ip: req.ip ?? null, userAgent: userAgentOf(req) };
}

/** A graphql-ws upgrade request is no express request: its peer's address is the one known. */
export function socketOrigin(req: IncomingMessage): RequestOrigin {
  return { ip: req.socket.remoteAddress ?? null, userAgent: userAgentOf(req) };
}

function userAgentOf(req: IncomingMessage): string | null {
  const userAgent = req.headers['user-agent'];
  return userAgent ? userAgent.slice(0, 500) : null;
}
