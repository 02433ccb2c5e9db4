import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { newId } from '../../../platform/ids';
import { Signer } from '../../esign/signer-side';

export type OtpChannel = 'email' | 'mobile';

/**
 * One one-time code sent to a signer's email or mobile. Only a keyed hash of the code is stored; a code is
 * good for a few minutes and a few attempts, and a newer code replaces the older ones of the same channel.
 */
@Entity({ tableName: 'signer_otps' })
@Index({ properties: ['signer', 'channel', 'createdAt'] })
export class SignerOtp {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('otp');

  @ManyToOne(() => Signer, { deleteRule: 'cascade' })
  signer!: Signer;

  @Property({ type: 'string', length: 8 })
  channel!: OtpChannel;

  @Property({ type: 'string', length: 64 })
  codeHash!: string;

  /**
   * A keyed hash of the address the code went to. A code proves that address only: after a reassignment or a
   * delegation the signer's contact is another, and the former person's open code no longer counts.
   */
  @Property({ type: 'string', length: 64, nullable: true })
  recipientHash?: string;

  @Property({ type: 'datetime' })
  expiresAt!: Date;

  @Property({ type: 'integer', default: 0 })
  failedAttempts: Opt<number> = 0;

  /** Set when the code was verified, or replaced by a newer one, or used up its attempts. */
  @Property({ type: 'datetime', nullable: true })
  closedAt?: Date;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();
}
