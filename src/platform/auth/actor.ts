import type { TokenScopeName } from './token-scopes';

/** Who is calling: the user behind a valid access token. */
export interface Actor {
  userId: string;
  tokenId: string;
  /** When the token stops working; long-lived connections opened with it close then. Absent: never. */
  expiresAt?: Date;
  /**
   * True for a token of the admin scope (issued by the CLI): it may act on any user's account through the admin
   * operations (see require-admin.ts). Absent or false: the user's own token.
   */
  admin?: boolean;
  /** What the token may do (docs/tokens.md, token-scopes.ts). Absent: everything (`all`), as the CLI's tokens. */
  scopes?: readonly TokenScopeName[];
  /** A browser token: the one resource (a session, a stamp order) it may read and follow, and nothing else. */
  resourceId?: string;
}

/**
 * How platform code learns who a bearer token stands for. The users module, which owns the tokens,
 * implements it; the entry hands it to the services (`services.tokens`).
 */
export interface TokenVerifier {
  /** The actor a raw token stands for, or null when it is unknown, expired or revoked. */
  authenticate(token: string): Promise<Actor | null>;
  /** Which of these tokens still work (neither revoked nor expired). */
  liveTokenIds(tokenIds: string[]): Promise<Set<string>>;
}
