import type { IncomingHttpHeaders } from 'node:http';
import { authenticateAccessToken, type Actor } from '../../modules/users/access-tokens';
import type { AppServices } from '../services';
import { bearerToken } from './bearer';

/** The actor behind an Authorization header, or null for a missing, malformed, unknown, expired or revoked token. */
export async function authenticateHeader(services: AppServices, header: string | undefined | null): Promise<Actor | null> {
  const token = bearerToken(header);
  if (!token) return null;
  return authenticateAccessToken(services.orm, token);
}

export function authorizationOf(headers: IncomingHttpHeaders): string | undefined {
  return headers.authorization;
}
