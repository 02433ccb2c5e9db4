import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import { EsignSession } from '../esign/esign-session.entity';
import { Signer } from '../esign/signer.entity';

export type AuditEventKind =
  | 'session_created'
  | 'invite_sent'
  | 'viewed'
  | 'otp_sent'
  | 'otp_verified'
  | 'otp_failed'
  | 'location_recorded'
  | 'location_refused'
  | 'face_attempt'
  | 'signed'
  | 'signer_failed'
  | 'session_completed'
  | 'session_cancelled'
  | 'session_expired'
  | 'completion_sent';

/** One step of a session's life, who took it from where: the evidence an owner keeps with the document. */
@Entity({ tableName: 'esign_audit_events' })
@Index({ properties: ['session', 'at'] })
export class AuditEvent {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('aud');

  @ManyToOne(() => EsignSession, { deleteRule: 'cascade' })
  session!: EsignSession;

  @ManyToOne(() => Signer, { deleteRule: 'cascade', nullable: true })
  signer?: Signer;

  @Property({ type: 'string', length: 32 })
  event!: AuditEventKind;

  /** The order steps happened in (several may share a millisecond); filled by the database. */
  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;

  @Property({ type: 'datetime', defaultRaw: 'clock_timestamp()' })
  at: Opt<Date> = new Date();

  @Property({ type: 'string', length: 64, nullable: true })
  ip?: string;

  @Property({ type: 'string', length: 500, nullable: true })
  userAgent?: string;

  @Property({ type: 'json', nullable: true })
  details?: Record<string, unknown>;
}
