import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import type { RowRef } from '../../platform/db/row-ref';
import { User } from '../users';

export type NotificationChannel = 'email' | 'sms' | 'whatsapp';
export type NotificationKind =
  'invite' | 'completion' | 'email_otp' | 'mobile_otp' | 'webhook_disabled' | 'session_declined' | 'reminder' | 'request_ended';
export type NotificationStatus = 'queued' | 'sent' | 'failed';

/**
 * The outbox: every message the service sends is a row, written in the transaction that decided to send
 * it and delivered afterwards by a pg-boss job (SMTP, an HTTP provider, or nowhere but this table).
 * The owner reads it over GraphQL; the tests read it too.
 */
@Entity({ tableName: 'notifications' })
@Index({ properties: ['session', 'createdAt', 'seq'] })
@Index({ properties: ['status', 'createdAt'] })
export class Notification {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('ntf');

  /** The session owner: whose outbox this is. */
  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  /** Named, not imported: the outbox sits below the esign module (the foreign keys stay in the database). */
  @ManyToOne({ entity: 'EsignSession', deleteRule: 'cascade', nullable: true })
  session?: RowRef;

  @ManyToOne({ entity: 'Signer', deleteRule: 'cascade', nullable: true })
  signer?: RowRef;

  @Property({ type: 'string', length: 16 })
  kind!: NotificationKind;

  @Property({ type: 'string', length: 16 })
  channel!: NotificationChannel;

  /** Email address, or the phone number in E.164. */
  @Property({ type: 'string', length: 320 })
  recipient!: string;

  @Property({ type: 'string', length: 300, nullable: true })
  subject?: string;

  @Property({ type: 'text' })
  textBody!: string;

  @Property({ type: 'text', nullable: true })
  htmlBody?: string;

  /** Emails: the complete RFC 5322 message as it was (or would have been) handed to SMTP. */
  @Property({ type: 'text', nullable: true })
  mime?: string;

  @Property({ type: 'string', length: 16 })
  status: Opt<NotificationStatus> = 'queued';

  /** Which provider delivered it: `smtp`, `http`, or `outbox` (kept here only). */
  @Property({ type: 'string', length: 16, nullable: true })
  provider?: string;

  @Property({ type: 'integer', default: 0 })
  attempts: Opt<number> = 0;

  @Property({ type: 'text', nullable: true })
  lastError?: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  /** Insertion order, filled by the database: rows made in one millisecond still list in a stable order. */
  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;

  @Property({ type: 'datetime', nullable: true })
  sentAt?: Date;
}
