import { Entity, Index, ManyToOne, PrimaryKey, Property, Unique, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import { User } from './user.entity';

/** An integrator credential. Only the SHA-256 of the token is kept; the token itself is shown once. */
@Entity({ tableName: 'access_tokens' })
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

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime', nullable: true })
  expiresAt?: Date;

  @Property({ type: 'datetime', nullable: true })
  revokedAt?: Date;
}
