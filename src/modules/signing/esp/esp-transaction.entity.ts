import { Entity, PrimaryKey, Property, type Opt } from '@mikro-orm/core';

/**
 * The sandbox ESP's own record of an eSign transaction (a real ESP keeps this on its side). The Aadhaar
 * number is kept sealed, only for the transaction's short life; the platform itself never stores it.
 */
@Entity({ tableName: 'sandbox_esp_transactions' })
export class SandboxEspTransaction {
  @PrimaryKey({ type: 'string', length: 64 })
  id!: string;

  @Property({ type: 'string', length: 64 })
  signerId!: string;

  @Property({ type: 'text' })
  aadhaarSealed!: string;

  @Property({ type: 'integer' })
  authMode!: number;

  @Property({ type: 'datetime' })
  expiresAt!: Date;

  @Property({ type: 'datetime', nullable: true })
  authenticatedAt?: Date;

  @Property({ type: 'datetime', nullable: true })
  usedAt?: Date;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();
}
