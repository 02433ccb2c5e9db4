import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import type { RowRef } from '../../platform/db/row-ref';
import { newId } from '../../platform/ids';

export type AuditEventKind =
  | 'session_created'
  | 'direct_link_used'
  | 'invite_sent'
  | 'viewed'
  | 'otp_sent'
  | 'otp_verified'
  | 'otp_failed'
  | 'location_recorded'
  | 'location_refused'
  | 'face_attempt'
  | 'fields_filled'
  | 'signed'
  | 'signer_failed'
  | 'session_completed'
  | 'session_cancelled'
  | 'signer_declined'
  | 'invite_resent'
  | 'signer_reassigned'
  | 'signer_delegated'
  | 'reminder_sent'
  | 'session_expired'
  | 'completion_sent'
  | 'esp_request_sent'
  | 'esp_acknowledged'
  | 'esp_response_refused'
  | 'esp_failed'
  | 'esp_cancelled'
  | 'esp_unavailable'
  | 'esp_batch_held'
  | 'esp_batches_voided'
  | 'dsc_started'
  | 'dsc_refused'
  | 'language_chosen';

/**
 * One step of a session's life, who took it from where: the evidence an owner keeps with the document.
 * The audit trail sits below the modules it records: session and signer are named, not imported (the
 * database still holds the foreign keys and deletes a session's trail with it).
 */
@Entity({ tableName: 'esign_audit_events' })
@Index({ properties: ['session', 'at'] })
export class AuditEvent {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('aud');

  @ManyToOne({ entity: 'EsignSession', deleteRule: 'cascade' })
  session!: RowRef;

  @ManyToOne({ entity: 'Signer', deleteRule: 'cascade', nullable: true })
  signer?: RowRef;

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
