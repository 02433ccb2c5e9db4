import { Collection, Entity, Index, ManyToOne, OneToMany, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import { StoredFile } from '../files/stored-file.entity';
import { Template } from '../templates/template.entity';
import { User } from '../users/user.entity';
import { Signer } from './signer.entity';

export type SessionStatus = 'pending' | 'completed' | 'expired' | 'cancelled';
export type SignType = 'aadhaar' | 'suresign' | 'pfx';

export interface EmailTemplateOverrides {
  company_name?: string | null;
  legal_name?: string | null;
  support_email?: string | null;
}

@Entity({ tableName: 'esign_sessions' })
@Index({ properties: ['user', 'createdAt', 'seq'] })
@Index({ properties: ['status', 'expiresAt'] })
export class EsignSession {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('esign');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 16 })
  signType!: SignType;

  @Property({ type: 'integer' })
  authMode!: number;

  @Property({ type: 'string', length: 40 })
  backend!: string;

  /** The PDF the integrator uploaded. */
  @ManyToOne(() => StoredFile)
  file!: StoredFile;

  /** The PDF signers see and sign: the upload, then each signed revision. */
  @ManyToOne(() => StoredFile)
  currentPdfFile!: StoredFile;

  @Property({ type: 'string', length: 255 })
  filename!: string;

  @Property({ type: 'string', length: 200, nullable: true })
  folder?: string;

  @Property({ type: 'boolean' })
  allowDownload!: boolean;

  @Property({ type: 'boolean', default: false })
  archived: Opt<boolean> = false;

  @Property({ type: 'integer' })
  expirySeconds!: number;

  @Property({ type: 'datetime' })
  expiresAt!: Date;

  @Property({ type: 'integer' })
  maxRetry!: number;

  @Property({ type: 'string', length: 2048, nullable: true })
  redirectUrl?: string;

  @Property({ type: 'string', length: 200, nullable: true })
  sender?: string;

  @Property({ type: 'json', nullable: true })
  emailTemplateOverrides?: EmailTemplateOverrides;

  /** Index of the signer whose turn it is (signers sign in array order). */
  @Property({ type: 'integer', default: 0 })
  signerIdx: Opt<number> = 0;

  /** Stamp certificate pages placed before the uploaded PDF; element pages shift by this much. */
  @Property({ type: 'integer', default: 0 })
  stampPageCount: Opt<number> = 0;

  @Property({ type: 'string', length: 16 })
  status: Opt<SessionStatus> = 'pending';

  /** When the working PDF got its signature fields; from then on every change is an incremental update. */
  @Property({ type: 'datetime', nullable: true })
  preparedAt?: Date;

  @Property({ type: 'string', length: 500, nullable: true })
  cancelReason?: string;

  @Property({ type: 'datetime', nullable: true })
  endedAt?: Date;

  /** The template (and its version) the session was started from, if any. */
  @ManyToOne(() => Template, { nullable: true })
  @Index()
  template?: Template;

  @Property({ type: 'integer', nullable: true })
  templateVersion?: number;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  /** Insertion order, filled by the database: rows made in one millisecond still list in a stable order. */
  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;

  @OneToMany(() => Signer, (signer) => signer.session, { orderBy: { position: 'asc' } })
  signers = new Collection<Signer>(this);
}
