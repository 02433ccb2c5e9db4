import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { generateAccessToken, hashToken } from '../../platform/auth/bearer';
import { announceTokenRevoked } from '../../platform/auth/token-sockets';
import { TOKEN_SCOPES, type TokenScopeName } from '../../platform/auth/token-scopes';
import { AppError } from '../../platform/errors';
import { checkPage } from '../../platform/graphql/paging';
import { Problems, isAbsent, text, wholeNumber } from '../../platform/validation/problems';
import { AccessToken, User } from '../users';

/** The documented limits of tokens an account makes (docs/tokens.md). */
export const TOKEN_LIMITS = {
  /** An account token lives at most five years; without `expires_in`, until it is revoked. */
  expiresIn: { min: 60, max: 5 * 365 * 24 * 3600 },
  /** A rotated token's previous secret works at most this long after the rotation. */
  graceSeconds: { min: 0, max: 24 * 3600, default: 0 },
  /** Tokens of one account that work at once (revoked and expired ones do not count; browser tokens neither). */
  livePerAccount: 100,
} as const;

export interface CreateTokenRequest {
  name?: string | null;
  scopes?: string[] | null;
  expires_in?: number | null;
}

/** A token as its account sees it, and its secret once, when it is made or rotated. */
export interface TokenView {
  token: AccessToken;
  secret?: string;
}

/**
 * Makes a token of the caller's account with a name, scopes and an optional expiry; answers its secret once. Only a
 * token of scope `all` gets here (the field's domain is `account`), so no token makes one broader than itself.
 */
export async function createToken(em: EntityManager, actor: Actor, request: CreateTokenRequest): Promise<TokenView> {
  const problems = new Problems();
  const name = text(problems, 'name', request.name, 200, true);
  const scopes = checkScopes(problems, request.scopes);
  const expiresIn = wholeNumber(problems, 'expires_in', request.expires_in, TOKEN_LIMITS.expiresIn);
  const error = problems.toError();
  if (error) throw error;
  return em.transactional(async (tx) => {
    // Serialises one account's token making, so that the live-token limit holds under racing requests.
    await tx
      .getConnection()
      .execute('select 1 from users where id = ? for update', [actor.userId], 'all', tx.getTransactionContext());
    const live = await tx.count(AccessToken, {
      user: actor.userId,
      scope: { $ne: 'browser' },
      revokedAt: null,
      $or: [{ expiresAt: null }, { expiresAt: { $gt: new Date() } }],
    });
    if (live >= TOKEN_LIMITS.livePerAccount)
      throw new AppError('conflict', {
        errors: [
          { field: 'tokens', problem: `an account has at most ${TOKEN_LIMITS.livePerAccount} working tokens: revoke one first` },
        ],
      });
    const secret = generateAccessToken();
    const token = tx.create(AccessToken, {
      user: tx.getReference(User, actor.userId),
      tokenHash: hashToken(secret),
      label: name,
      scope: 'user',
      scopes,
      expiresAt: expiresIn === undefined ? undefined : new Date(Date.now() + expiresIn * 1000),
    });
    await tx.flush();
    return { token, secret };
  });
}

/** One or more known scopes, each once; `all` stands alone. */
function checkScopes(problems: Problems, scopes: string[] | null | undefined): TokenScopeName[] {
  if (!scopes || scopes.length === 0) {
    problems.missingField('scopes');
    return [];
  }
  const unknown = scopes.filter((scope) => !(TOKEN_SCOPES as readonly string[]).includes(scope));
  if (unknown.length > 0)
    problems.invalidField('scopes', `unknown ${unknown.join(', ')}: each is one of ${TOKEN_SCOPES.join(', ')}`);
  const known = [...new Set(scopes)] as TokenScopeName[];
  return known.includes('all') ? ['all'] : known;
}

/** The account's tokens (not browser tokens), newest first, never their secrets. */
export async function listTokens(
  em: EntityManager,
  actor: Actor,
  args: { page?: number | null; size?: number | null },
): Promise<{ items: AccessToken[]; has_next: boolean }> {
  const { offset, limit } = checkPage(args);
  const rows = await em.find(
    AccessToken,
    { user: actor.userId, scope: { $ne: 'browser' } },
    { orderBy: { createdAt: 'desc', id: 'desc' }, offset, limit: limit + 1 },
  );
  return { items: rows.slice(0, limit), has_next: rows.length > limit };
}

/**
 * A new secret for a token, which keeps its id, name, scopes and expiry. The previous secret stops at once, or after
 * `grace_seconds` (up to a day), so that a server can roll its configuration without refusing requests meanwhile.
 * An admin token is the CLI's to manage.
 */
export async function rotateToken(
  em: EntityManager,
  actor: Actor,
  request: { client_id?: string | null; grace_seconds?: number | null },
): Promise<TokenView> {
  const problems = new Problems();
  const graceSeconds =
    wholeNumber(problems, 'grace_seconds', request.grace_seconds, TOKEN_LIMITS.graceSeconds) ?? TOKEN_LIMITS.graceSeconds.default;
  const error = problems.toError();
  if (error) throw error;
  return em.transactional(async (tx) => {
    const token = await liveTokenOf(tx, actor, request.client_id);
    if (token.scope !== 'user')
      throw new AppError('forbidden', {
        errors: [{ field: 'client_id', problem: `a ${token.scope} token cannot be rotated: make a new one` }],
      });
    const secret = generateAccessToken();
    token.previousTokenHash = graceSeconds > 0 ? token.tokenHash : undefined;
    token.previousExpiresAt = graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000) : undefined;
    token.tokenHash = hashToken(secret);
    await tx.flush();
    // Without a grace the old secret is dead now: so are the graphql-ws connections opened with it (every socket of the
    // token, since the new secret was never used yet). With a grace they live on until the token is revoked.
    if (graceSeconds === 0) await announceTokenRevoked(tx, token.id);
    return { token, secret };
  });
}

/** Revokes one of the account's tokens (any kind): requests with it answer 401 at once, its sockets close. */
export async function revokeToken(em: EntityManager, actor: Actor, clientId: string | null | undefined): Promise<AccessToken> {
  return em.transactional(async (tx) => {
    const token = await ownTokenOf(tx, actor, clientId);
    token.revokedAt ??= new Date();
    await tx.flush();
    await announceTokenRevoked(tx, token.id);
    return token;
  });
}

async function ownTokenOf(em: EntityManager, actor: Actor, clientId: string | null | undefined): Promise<AccessToken> {
  if (isAbsent(clientId)) throw AppError.missingFields(['client_id']);
  const token = await em.findOne(AccessToken, { id: clientId, user: actor.userId });
  if (!token) throw new AppError('not_found', { errors: [{ field: 'client_id', problem: 'no such token of yours' }] });
  return token;
}

/** A token that still works: a revoked or expired one cannot be rotated (409). */
async function liveTokenOf(em: EntityManager, actor: Actor, clientId: string | null | undefined): Promise<AccessToken> {
  const token = await ownTokenOf(em, actor, clientId);
  if (token.revokedAt || (token.expiresAt && token.expiresAt <= new Date()))
    throw new AppError('conflict', { errors: [{ field: 'client_id', problem: 'the token is revoked or expired' }] });
  return token;
}
