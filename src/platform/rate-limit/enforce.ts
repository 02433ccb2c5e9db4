import { createHash } from 'node:crypto';
import type { Response } from 'express';
import type { AppConfig } from '../../config';
import { AppError } from '../errors';
import { rateLimitHeaders, type RateLimiter, type RatePolicy } from './rate-limiter';

export type CallerKind = 'token' | 'signer' | 'address';

/** The three quotas of docs/api.md (Limits), per minute; a quota of 0 is no limit. */
export function ratePolicies(config: AppConfig): Record<CallerKind, RatePolicy | null> {
  const perMinute = (name: CallerKind, limit: number): RatePolicy | null =>
    limit > 0 ? { name, limit, windowSeconds: 60 } : null;
  return {
    token: perMinute('token', config.rateLimits.perToken),
    signer: perMinute('signer', config.rateLimits.perSigner),
    address: perMinute('address', config.rateLimits.perAddress),
  };
}

/** Signer tokens are credentials: their quota is keyed by a digest, never by the token itself. */
export function signerCaller(token: string): string {
  return createHash('sha256').update(token).digest('base64url').slice(0, 32);
}

/**
 * Counts one request of `caller`; the answer carries the RateLimit fields. A spent quota is `429 rate_limited`
 * with `Retry-After` (seconds), before anything else runs.
 */
export function takeRequest(limiter: RateLimiter, policy: RatePolicy | null, caller: string, res?: Response): void {
  if (!policy) return;
  const decision = limiter.consume(policy, caller);
  if (res && !res.headersSent) {
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) res.setHeader(name, value);
  }
  if (decision.allowed) return;
  if (res && !res.headersSent) res.setHeader('Retry-After', String(decision.resetSeconds));
  throw new AppError('rate_limited', {
    errors: [
      {
        field: 'request',
        problem: `more than ${policy.limit} requests in ${policy.windowSeconds} s; retry in ${decision.resetSeconds} s`,
      },
    ],
    details: { limit: policy.limit, window_seconds: policy.windowSeconds, retry_after: decision.resetSeconds },
  });
}
