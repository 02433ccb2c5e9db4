import type { Actor, TokenVerifier } from './actor';
import { bearerToken } from './bearer';

/** The actor behind an Authorization header, or null for a missing, malformed, unknown, expired or revoked token. */
export async function authenticateHeader(
  services: { tokens: TokenVerifier },
  header: string | undefined | null,
): Promise<Actor | null> {
  const token = bearerToken(header);
  if (!token) return null;
  return services.tokens.authenticate(token);
}
