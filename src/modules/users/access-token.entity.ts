import { Check, Entity, Index, ManyToOne, PrimaryKey, Property, Unique, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import { User } from './user.entity';

/**
 * The token's kind. `user`: the integrator's own credential, which reaches only that user's data, within its
 * `scopes`. `admin`: an operator's credential (issued by the CLI only), which also reaches the admin operations on
 * any user's account. `browser`: short-lived, reading and following one resource of the user's (`resourceId`).
 */
export type TokenScope = 'user' | 'admin' | 'browser';

/** An integrator credential. Only the SHA-256 of the token is kept; the token itself is shown once. */
@Entity({ tableName: 'access_tokens' })
// Written as OR, not IN: MikroORM reads `col IN (...)` checks back as enum columns and would see a difference.
@Check({ name: 'access_tokens_scope_known', expression: "scope = 'user' or scope = 'admin' or scope = 'browser'" })
@Check({ name: 'access_tokens_browser_resource', expression: "scope <> 'browser' or resource_id is not null" })
export class AccessToken {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('tok');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  @Index()
  user!: User;

  @Property({ type: 'string', length: 64 })
  @Unique()
  tokenHash!: string;

  /** The secret it had before its last rotation, which works until `previousExpiresAt` (a rotation's grace). */
  @Property({ type: 'string', length: 64, nullable: true })
  @Index()
  previousTokenHash?: string;

  @Property({ type: 'datetime', nullable: true })
  previousExpiresAt?: Date;

  @Property({ type: 'string', length: 200, nullable: true })
  label?: string;

  @Property({ type: 'string', length: 16, default: 'user' })
  scope: Opt<TokenScope> = 'user';

  /** What a `user` token may do (docs/tokens.md); null: everything (`all`), as CLI tokens. */
  @Property({ type: 'json', nullable: true })
  scopes?: string[];

  /** A browser token's one resource (a session or a stamp order). */
  @Property({ type: 'string', length: 64, nullable: true })
  resourceId?: string;

  /** When a request last came with it (kept to the minute: one write per token a minute at most per process). */
  @Property({ type: 'datetime', nullable: true })
  lastUsedAt?: Date;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime', nullable: true })
  expiresAt?: Date;

  @Property({ type: 'datetime', nullable: true })
  revokedAt?: Date;
}
