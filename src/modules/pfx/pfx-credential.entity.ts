import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import { User } from '../users';

/**
 * An uploaded signing certificate. The key and certificates are kept only sealed (AES-256-GCM under
 * SECRETS_ENCRYPTION_KEY); the password is not kept at all. Never a GraphQL type itself.
 */
@Entity({ tableName: 'pfx_credentials' })
@Index({ properties: ['user', 'createdAt', 'seq'] })
export class PfxCredential {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('pfx');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 255 })
  name!: string;

  @Property({ type: 'string', length: 1000 })
  subject!: string;

  @Property({ type: 'string', length: 1000 })
  issuer!: string;

  @Property({ type: 'string', length: 100 })
  serialNumber!: string;

  @Property({ type: 'datetime' })
  notBefore!: Date;

  @Property({ type: 'datetime' })
  notAfter!: Date;

  /** Sealed JSON: `{privateKeyPem, certificatePem, chainPems}`. */
  @Property({ type: 'text', lazy: true })
  sealed!: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  /** Insertion order, filled by the database: rows made in one millisecond still list in a stable order. */
  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;

  @Property({ type: 'datetime', nullable: true })
  deletedAt?: Date;
}
