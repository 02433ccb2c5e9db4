import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import type { RowRef } from '../../platform/db/row-ref';
import { newId } from '../../platform/ids';

export type AccountAuditAction = 'wallet_credited' | 'wallet_debited' | 'stamp_fee_set';

/**
 * One change made to a user's account by someone other than that user: an admin token's credit, debit or fee,
 * or a credit from the operator's CLI. The session trail (AuditEvent) is per session; this one is per account.
 * Who acted is kept as plain ids, not foreign keys: the record must outlive the admin's token and user.
 */
@Entity({ tableName: 'account_audit_events' })
@Index({ properties: ['subjectUser', 'seq'] })
export class AccountAuditEvent {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('aud');

  /** The account the action was about; its trail goes with it. */
  @ManyToOne({ entity: 'User', deleteRule: 'cascade' })
  subjectUser!: RowRef;

  @Property({ type: 'string', length: 32 })
  action!: AccountAuditAction;

  /** The user of the admin token; null for the operator's CLI. */
  @Property({ type: 'string', length: 64, nullable: true })
  actorUserId?: string;

  @Property({ type: 'string', length: 64, nullable: true })
  actorTokenId?: string;

  /** What changed: the ledger entry and amount, or the fee before and after. */
  @Property({ type: 'json' })
  details!: Record<string, unknown>;

  @Property({ type: 'string', length: 64, nullable: true })
  ip?: string;

  @Property({ type: 'string', length: 500, nullable: true })
  userAgent?: string;

  @Property({ type: 'datetime', defaultRaw: 'clock_timestamp()' })
  at: Opt<Date> = new Date();

  /** The order actions happened in (several may share a millisecond); filled by the database. */
  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;
}
