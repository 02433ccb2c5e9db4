import { Entity, ManyToOne, PrimaryKey, Property, Unique, type Opt } from '@mikro-orm/core';
import type { RowRef } from '../../platform/db/row-ref';
import { newId } from '../../platform/ids';
import { User } from '../users';

/**
 * A template's public signing link (docs/direct-links.md): whoever opens `{PUBLIC_URL}/d/{slug}` gives their name and
 * contact and signs a session made from the template for them. One per template; on or off, with an optional expiry
 * and use limit.
 */
@Entity({ tableName: 'direct_links' })
export class DirectLink {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('dlink');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @ManyToOne({ entity: 'Template', deleteRule: 'cascade' })
  @Unique()
  template!: RowRef;

  /** The public part of the link's address: 128 random bits, not guessable. */
  @Property({ type: 'string', length: 64 })
  @Unique()
  slug!: string;

  @Property({ type: 'boolean' })
  enabled!: boolean;

  @Property({ type: 'datetime', nullable: true })
  expiresAt?: Date | null;

  /** Sessions the link may start in all; null: no limit. */
  @Property({ type: 'integer', nullable: true })
  maxUses?: number | null;

  @Property({ type: 'integer', default: 0 })
  uses: Opt<number> = 0;

  /**
   * What every session of the link gets: initialize-from-template's options (`sign_type`, `stamp`, `expiry_seconds`...),
   * `signers` (the contacts of the template's other signers, in order, the visitor's place left out) and
   * `visitor_position` (the template signer the visitor is; 0 by default).
   */
  @Property({ type: 'json' })
  options!: Record<string, unknown>;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();
}
