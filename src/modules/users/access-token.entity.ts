import { Check, Entity, Index, ManyToOne, PrimaryKey, Property, Unique, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import { User } from './user.entity';

/**
 * `user`: the integrator's own credential, which reaches only that user's data. `admin`: an operator's credential
 * (issued by the CLI only), which also reaches the admin operations on any user's account.
 */
export type TokenScope = 'user' | 'admin';

/** An integrator credential. Only the SHA-256 of the token is kept; the token itself is shown once. */
@Entity({ tableName: 'access_tokens' })
// Written as OR, not IN: MikroORM reads `col IN (...)` checks back as enum columns and would see a difference.
@Check({ name: 'access_tokens_scope_known', expression: "scope = 'user' or scope = 'admin'" })
export class AccessToken {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('tok');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  @Index()
  user!: User;

  @Property({ type: 'string', length: 64 })
  @Unique()
  tokenHash!: string;

  @Property({ type: 'string', length: 200, nullable: true })
  label?: string;

  @Property({ type: 'string', length: 16, default: 'user' })
  scope: Opt<TokenScope> = 'user';

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime', nullable: true })
  expiresAt?: Date;

  @Property({ type: 'datetime', nullable: true })
  revokedAt?: Date;
}
