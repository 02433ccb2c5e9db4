import { createHash, randomBytes } from 'node:crypto';

export const ACCESS_TOKEN_PREFIX = 'esk_';

/** 256 random bits behind a recognisable prefix (so secret scanners can find leaked tokens). */
export function generateAccessToken(): string {
  return `${ACCESS_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const BEARER = /^Bearer[ ]+([A-Za-z0-9_\-.~+/]+=*)[ ]*$/i;

/** The token of an `Authorization: Bearer <token>` header, or null when absent or malformed. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const match = BEARER.exec(header);
  if (!match) return null;
  const token = match[1];
  return token.startsWith(ACCESS_TOKEN_PREFIX) && token.length <= 200 ? token : null;
}

/** Any bearer credential, whatever its kind (signer tokens have no prefix). */
export function bearerTokenOf(header: string | undefined | null): string | null {
  if (!header) return null;
  const match = BEARER.exec(header);
  return match && match[1].length <= 200 ? match[1] : null;
}
