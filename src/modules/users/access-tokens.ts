import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor, TokenVerifier } from '../../platform/auth/actor';
import { announceTokenRevoked } from '../../platform/auth/token-sockets';
import { dateOf, leanRows } from '../../platform/db/lean-sql';
import type { Orm } from '../../platform/db/orm';
import { AppError } from '../../platform/errors';
import { generateAccessToken, hashToken } from '../../platform/auth/bearer';
import type { TokenScopeName } from '../../platform/auth/token-scopes';
import { AccessToken, type TokenScope } from './access-token.entity';
import { User } from './user.entity';

export interface IssuedToken {
  token_id: string;
  token: string;
  expires_at: string | null;
  scope: TokenScope;
}

/** The kinds the CLI issues (browser tokens are made over the API only). */
export const CLI_TOKEN_KINDS: readonly TokenScope[] = ['user', 'admin'];

/**
 * Issued by the CLI (and with a new user). Over the API an account makes only `user` tokens within its scopes and
 * browser tokens (the tokens module), so no token can make an admin one.
 */
export async function issueAccessToken(
  em: EntityManager,
  userId: string,
  options: { expiresInSeconds?: number; label?: string; scope?: TokenScope } = {},
): Promise<IssuedToken> {
  const user = await em.findOne(User, { id: userId });
  if (!user) throw new AppError('not_found', { message: `no user ${userId}` });
  if (options.expiresInSeconds !== undefined && !(Number.isInteger(options.expiresInSeconds) && options.expiresInSeconds > 0)) {
    throw AppError.badRequest([{ field: 'expires_in', problem: 'must be a whole number of seconds greater than 0' }]);
  }
  if (options.scope !== undefined && !CLI_TOKEN_KINDS.includes(options.scope)) {
    throw AppError.badRequest([{ field: 'scope', problem: `must be one of ${CLI_TOKEN_KINDS.join(', ')}` }]);
  }
  const token = generateAccessToken();
  const record = em.create(AccessToken, {
    user,
    tokenHash: hashToken(token),
    label: options.label,
    scope: options.scope ?? 'user',
    expiresAt: options.expiresInSeconds ? new Date(Date.now() + options.expiresInSeconds * 1000) : undefined,
  });
  await em.persistAndFlush(record);
  return { token_id: record.id, token, expires_at: record.expiresAt?.toISOString() ?? null, scope: record.scope };
}

/**
 * Requests see a revoked token at once (each one looks it up); graphql-ws connections checked it only when
 * they opened, so every process is told, in the same transaction, to close the ones it holds.
 */
export async function revokeAccessToken(em: EntityManager, tokenId: string): Promise<{ token_id: string; revoked_at: string }> {
  return em.transactional(async (tx) => {
    const record = await tx.findOne(AccessToken, { id: tokenId });
    if (!record) throw new AppError('not_found', { message: `no token ${tokenId}` });
    record.revokedAt ??= new Date();
    await tx.flush();
    await announceTokenRevoked(tx, record.id);
    return { token_id: record.id, revoked_at: record.revokedAt.toISOString() };
  });
}

/**
 * The actor a raw token stands for, or null when it is unknown, expired or revoked. Every request asks: a lean read
 * (a rotated token's previous secret works until its grace ends).
 */
export async function authenticateAccessToken(orm: Orm, token: string): Promise<Actor | null> {
  const hash = hashToken(token);
  const rows = await leanRows<TokenRow>(
    orm,
    `select id, user_id, expires_at, scope, scopes, resource_id from access_tokens
      where (token_hash = $1 or (previous_token_hash = $1 and previous_expires_at > now()))
        and revoked_at is null and (expires_at is null or expires_at > now())`,
    [hash],
  );
  const row = rows[0];
  if (!row) return null;
  noteUse(orm, row.id);
  const actor: Actor = { userId: row.user_id, tokenId: row.id, expiresAt: dateOf(row.expires_at) };
  if (row.scope === 'admin') actor.admin = true;
  if (row.scope === 'browser') actor.resourceId = row.resource_id!;
  else if (row.scopes) actor.scopes = row.scopes;
  return actor;
}

interface TokenRow {
  id: string;
  user_id: string;
  expires_at: string | null;
  scope: TokenScope;
  scopes: TokenScopeName[] | null;
  resource_id: string | null;
}

/** When this process last wrote each token's `last_used_at`: at most one write per token a minute. */
const lastNoted = new Map<string, number>();
const NOTE_EVERY_MS = 60_000;

/** Records that a token was used (to the minute), after the request's own read and never in its way. */
function noteUse(orm: Orm, tokenId: string): void {
  const now = Date.now();
  if (now - (lastNoted.get(tokenId) ?? 0) < NOTE_EVERY_MS) return;
  // Browser tokens come and go: the map forgets everything once it is large, which costs a write per token at most.
  if (lastNoted.size >= 10_000) lastNoted.clear();
  lastNoted.set(tokenId, now);
  void leanRows(orm, 'update access_tokens set last_used_at = now() where id = $1', [tokenId]).catch(() => {
    lastNoted.delete(tokenId);
  });
}

/** Which of these tokens still work (neither revoked nor expired). */
export async function liveTokenIds(orm: Orm, tokenIds: string[]): Promise<Set<string>> {
  const rows = await leanRows<{ id: string }>(
    orm,
    'select id from access_tokens where id = any($1) and revoked_at is null and (expires_at is null or expires_at > now())',
    [tokenIds],
  );
  return new Set(rows.map((row) => row.id));
}

/** The users module's answer to the platform's question "who is this token?" (see platform/auth/actor.ts). */
export function accessTokenVerifier(orm: Orm): TokenVerifier {
  return {
    authenticate: (token) => authenticateAccessToken(orm, token),
    liveTokenIds: (tokenIds) => liveTokenIds(orm, tokenIds),
  };
}
