import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import type { RowRef } from '../../platform/db/row-ref';
import { User } from '../users';

/**
 * `queued` until its job picks it up, `running` while rows are made into sessions, then `completed` (every row
 * created or failed) or `cancelled` (rows not yet made were skipped; the sessions made were cancelled).
 */
export type BulkStatus = 'queued' | 'running' | 'completed' | 'cancelled';

/** What one bulk row became: still `queued`, a `created` session, `failed` (with its error) or `skipped` (cancelled). */
export type BulkRowStatus = 'queued' | 'created' | 'failed' | 'skipped';

/** A row's refusal: the code and message initialize-from-template would have answered, and the fields it names. */
export interface BulkRowError {
  code: string;
  message: string;
  errors: { field: string; problem: string }[];
}

/**
 * One bulk send: a template sent to many recipients, one session per row, made by a job (bulk.jobs.ts). The
 * session-level options apply to every row (`options`, as initialize-from-template takes them).
 */
@Entity({ tableName: 'bulks' })
@Index({ properties: ['user', 'createdAt'] })
export class Bulk {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('bulk');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @ManyToOne({ entity: 'Template', deleteRule: 'cascade' })
  template!: RowRef;

  /** The template's version when the bulk was sent: every row is made from it (a later edit does not reach them). */
  @Property({ type: 'integer' })
  templateVersion!: number;

  @Property({ type: 'string', length: 16 })
  status: Opt<BulkStatus> = 'queued';

  /** Where the rows came from: `json` or `csv`. */
  @Property({ type: 'string', length: 8 })
  source!: 'json' | 'csv';

  @Property({ type: 'integer' })
  rowCount!: number;

  /** The session options every row gets (initialize-from-template's, without signers; a row's `stamp` wins). */
  @Property({ type: 'json' })
  options!: Record<string, unknown>;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime', nullable: true })
  finishedAt?: Date;

  /** When the last `esign.bulk.progress` event was recorded: they go at most every BULK_LIMITS.progressSeconds. */
  @Property({ type: 'datetime', nullable: true })
  progressAnnouncedAt?: Date;

  /** When a job last made rows of it: a running bulk whose job stopped (a killed worker) is resumed by the sweep. */
  @Property({ type: 'datetime', nullable: true })
  heartbeatAt?: Date;
}

/** One recipient of a bulk: its input, and the session it became or why it did not. */
@Entity({ tableName: 'bulk_rows' })
@Index({ properties: ['bulk', 'status', 'position'] })
export class BulkRow {
  @ManyToOne(() => Bulk, { primary: true, deleteRule: 'cascade' })
  bulk!: Bulk;

  /** The row's place in the bulk, from 0: rows are made in this order. */
  @PrimaryKey({ type: 'integer' })
  position!: number;

  /** The integrator's own key for the row; a key given twice in one bulk fails the later row (`duplicate_key`). */
  @Property({ type: 'string', length: 200, nullable: true })
  key?: string;

  /** The row as given: `{signers, element_values, stamp}`. */
  @Property({ type: 'json' })
  input!: Record<string, unknown>;

  @Property({ type: 'string', length: 16 })
  status: Opt<BulkRowStatus> = 'queued';

  @Property({ type: 'string', length: 64, nullable: true })
  sessionId?: string;

  @Property({ type: 'json', nullable: true })
  error?: BulkRowError;

  @Property({ type: 'datetime', nullable: true })
  doneAt?: Date;
}
