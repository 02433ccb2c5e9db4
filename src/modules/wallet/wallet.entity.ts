import { BigIntType, Check, Entity, Index, ManyToOne, OneToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import { User } from '../users';

/** One balance per user, in integer paise. The CHECK makes a negative balance impossible at the database. */
@Entity({ tableName: 'wallets' })
@Check({ name: 'wallets_balance_non_negative', expression: 'balance_paise >= 0' })
export class Wallet {
  @OneToOne(() => User, { primary: true, deleteRule: 'cascade' })
  user!: User;

  @Property({ type: new BigIntType('bigint'), defaultRaw: '0' })
  balancePaise: Opt<bigint> = 0n;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  updatedAt: Opt<Date> = new Date();
}

/** `credit` and `debit` are manual (an admin, or a credit from the CLI); `charge` and `refund` are the service's. */
export type WalletEntryKind = 'credit' | 'debit' | 'charge' | 'refund';

/** The ledger: every change of a balance is one row, and the balance after it. */
@Entity({ tableName: 'wallet_entries' })
@Index({ properties: ['user', 'createdAt', 'seq'] })
export class WalletEntry {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('wle');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 16 })
  kind!: WalletEntryKind;

  /** Signed: credits and refunds are positive, charges and debits negative. */
  @Property({ type: new BigIntType('bigint') })
  amountPaise!: bigint;

  @Property({ type: new BigIntType('bigint') })
  balanceAfterPaise!: bigint;

  @Property({ type: 'string', length: 500 })
  description!: string;

  /** What the entry is about (an order id, a refunded instance id); null for manual credits. */
  @Property({ type: 'string', length: 64, nullable: true })
  reference?: string;

  /**
   * Who made a manual entry: the user and token of the admin token used; null for the service's own charges and
   * refunds and for credits from the operator's CLI. Plain ids, not foreign keys: the ledger outlives them.
   */
  @Property({ type: 'string', length: 64, nullable: true })
  actorUserId?: string;

  @Property({ type: 'string', length: 64, nullable: true })
  actorTokenId?: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  /** Insertion order, filled by the database: rows made in one millisecond still list in a stable order. */
  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;
}
