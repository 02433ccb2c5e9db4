import { BigIntType, Check, Entity, PrimaryKey, Property, Unique, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';

@Entity({ tableName: 'users' })
@Check({ name: 'users_stamp_fee_non_negative', expression: 'stamp_fee_paise >= 0' })
export class User {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('user');

  @Property({ type: 'string', length: 320 })
  @Unique()
  email!: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  /**
   * The fee per stamp this user's orders pay, in paise, set by an admin; null: the configured default
   * (ESTAMP_FEE_PER_STAMP), so that changing the setting reaches everyone without a price of their own.
   */
  @Property({ type: new BigIntType('bigint'), nullable: true })
  stampFeePaise?: bigint | null;

  /** The origins allowed to frame this account's signing pages (docs/embedding.md); none: no site may. */
  @Property({ type: 'json', nullable: true })
  embedOrigins?: string[] | null;
}
