import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { StampInstance, type StampStatus } from './stamp-order.entity';

/**
 * One step of a stamp instance's life. Written by the database itself (a trigger on stamp_instances, migration
 * StampInstanceHistory), for every insert and every change of status, whichever statement made it: no code path
 * can move a stamp without a trace. The same migration refuses a move its life does not allow (see
 * docs/stamps.md): pending -> available | rejected, available -> reserved, reserved -> used | available.
 */
@Entity({ tableName: 'stamp_instance_events' })
@Index({ properties: ['instance', 'id'] })
export class StampInstanceEvent {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @ManyToOne(() => StampInstance, { deleteRule: 'cascade' })
  instance!: StampInstance;

  /** Null for the instance's creation. */
  @Property({ type: 'string', length: 16, nullable: true })
  fromStatus?: StampStatus;

  @Property({ type: 'string', length: 16 })
  toStatus!: StampStatus;

  /** The session that reserved, used or released the stamp. Kept as text: the history outlives a deleted session. */
  @Property({ type: 'string', length: 64, nullable: true })
  sessionId?: string;

  /** Why: the vendor's refusal, or the session's end that released or used the stamp. */
  @Property({ type: 'string', length: 300, nullable: true })
  reason?: string;

  @Property({ type: 'datetime', defaultRaw: 'clock_timestamp()' })
  at: Opt<Date> = new Date();
}
