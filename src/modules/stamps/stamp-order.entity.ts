import { BigIntType, Entity, Index, ManyToOne, PrimaryKey, Property, Unique, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import type { RowRef } from '../../platform/db/row-ref';
import { StoredFile } from '../files';
import { User } from '../users';

export type StampStatus = 'pending' | 'available' | 'reserved' | 'used' | 'rejected';
export const STAMP_STATUSES: readonly StampStatus[] = ['pending', 'available', 'reserved', 'used', 'rejected'];

@Entity({ tableName: 'stamp_orders' })
@Index({ properties: ['user', 'createdAt', 'seq'] })
@Unique({ properties: ['user', 'idempotencyKey'] })
export class StampOrder {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('stamp');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 4 })
  stateCode!: string;

  @Property({ type: 'string', length: 100 })
  articleId!: string;

  @Property({ type: 'string', length: 200 })
  firstPartyName!: string;

  @Property({ type: 'string', length: 200 })
  secondPartyName!: string;

  /** Per stamp, whole rupees in paise. */
  @Property({ type: new BigIntType('bigint') })
  dutyPaise!: bigint;

  @Property({ type: new BigIntType('bigint') })
  considerationPaise!: bigint;

  @Property({ type: 'string', length: 500, nullable: true })
  description?: string;

  @Property({ type: 'string', length: 500, nullable: true })
  firstPartyAddress?: string;

  @Property({ type: 'integer' })
  quantity!: number;

  @Property({ type: 'boolean' })
  mock!: boolean;

  /** The fee per stamp in force when the order was placed. */
  @Property({ type: new BigIntType('bigint') })
  feePaise!: bigint;

  /** What the wallet was charged (0 for mock orders). */
  @Property({ type: new BigIntType('bigint') })
  chargedPaise!: bigint;

  @Property({ type: 'string', length: 200, nullable: true })
  idempotencyKey?: string;

  /** SHA-256 of the request an idempotency key was first used with: the key cannot be reused for another. */
  @Property({ type: 'string', length: 64, nullable: true })
  requestFingerprint?: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  /** When procurement progress was last announced (subscription event, webhook): at most once a second. */
  @Property({ type: 'datetime', nullable: true })
  progressAnnouncedAt?: Date;

  /** Insertion order, filled by the database: rows made in one millisecond still list in a stable order. */
  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;
}

@Entity({ tableName: 'stamp_instances' })
@Index({ properties: ['order', 'status'] })
@Unique({
  name: 'stamp_instances_certificate_number_unique',
  expression:
    'create unique index "stamp_instances_certificate_number_unique" on "stamp_instances" ("certificate_number") where "certificate_number" is not null',
})
@Index({ properties: ['user', 'stateCode', 'articleId', 'status', 'dutyPaise'] })
export class StampInstance {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('stamp_inst');

  @ManyToOne(() => StampOrder, { deleteRule: 'cascade' })
  order!: StampOrder;

  /** Denormalised from the order: inventory searches by owner, state, article and duty. */
  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 4 })
  stateCode!: string;

  @Property({ type: 'string', length: 100 })
  articleId!: string;

  @Property({ type: new BigIntType('bigint') })
  dutyPaise!: bigint;

  @Property({ type: 'string', length: 16 })
  status: Opt<StampStatus> = 'pending';

  /** Position within the order (1..quantity), printed on the certificate. */
  @Property({ type: 'integer' })
  serial!: number;

  /** A worker's lease on a pending instance; a crashed worker's lease runs out and another takes over. */
  @Property({ type: 'datetime', nullable: true })
  claimExpiresAt?: Date;

  /** Asks of the vendor that got no answer or a `pending` one: the next ask waits longer. */
  @Property({ type: 'integer', defaultRaw: '0' })
  vendorAttempts: Opt<number> = 0;

  /** Unique (a partial index): a certificate number belongs to one stamp. */
  @Property({ type: 'string', length: 40, nullable: true })
  certificateNumber?: string;

  @Property({ type: 'string', length: 20, nullable: true })
  verificationCode?: string;

  @ManyToOne(() => StoredFile, { nullable: true })
  pdfFile?: StoredFile;

  /**
   * The session holding the stamp while `reserved`, and that used it once `used`. Named, not imported:
   * stamps sit below the esign module (the foreign key stays in the database).
   */
  @ManyToOne({ entity: 'EsignSession', nullable: true, deleteRule: 'set null' })
  @Index()
  session?: RowRef;

  @Property({ type: 'datetime', nullable: true })
  issuedAt?: Date;

  @Property({ type: 'string', length: 300, nullable: true })
  rejectedReason?: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();
}
