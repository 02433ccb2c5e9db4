/**
 * Token scopes (docs/tokens.md). A token made over the API carries one or more: `all` (everything the account may do,
 * as the CLI's tokens), `read` (every query and subscription, no change), `sessions` (e-sign sessions, templates, bulk
 * sends, files, PFX, verification), `stamps` (stamp orders, reference data, the wallet) and `webhooks` (endpoints and
 * deliveries). Each root field of the schema names the part of the API it belongs to (its `FieldDomain`).
 */
export const TOKEN_SCOPES = ['all', 'read', 'sessions', 'stamps', 'webhooks'] as const;
export type TokenScopeName = (typeof TOKEN_SCOPES)[number];

/**
 * The part of the API a root field belongs to: a scope of its own (`sessions`, `stamps`, `webhooks`); `any` (every
 * token, e.g. who am I); `account` (only `all`: the account's tokens themselves, so that no narrow token can make a
 * broader one). A root field that names none is `account`.
 */
export type FieldDomain = 'sessions' | 'stamps' | 'webhooks' | 'any' | 'account';

export type OperationKind = 'query' | 'mutation' | 'subscription';

/** The scopes that would allow a root field of `domain` run as `kind`, or null when the actor's token may run it. */
export function scopesNeeded(
  scopes: readonly TokenScopeName[] | undefined,
  domain: FieldDomain,
  kind: OperationKind,
): TokenScopeName[] | null {
  if (!scopes || scopes.includes('all') || domain === 'any') return null;
  if (domain === 'account') return ['all'];
  if (scopes.includes(domain)) return null;
  if (kind !== 'mutation' && scopes.includes('read')) return null;
  return kind === 'mutation' ? [domain, 'all'] : [domain, 'read', 'all'];
}
