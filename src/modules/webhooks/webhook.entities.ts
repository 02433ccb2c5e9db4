import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import { User } from '../users';

/**
 * Where a user wants events POSTed. The signing secret is kept only sealed (AES-256-GCM under
 * SECRETS_ENCRYPTION_KEY) and shown once, when it is made; during a rotation the previous one stays valid (and
 * signed with) until `previousSecretExpiresAt`. Never a GraphQL type itself.
 */
@Entity({ tableName: 'webhook_endpoints' })
@Index({ properties: ['user', 'createdAt', 'seq'] })
export class WebhookEndpoint {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('whk');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 2048 })
  url!: string;

  @Property({ type: 'string', length: 500, nullable: true })
  description?: string;

  /** Event types, or `['*']` for every one. */
  @Property({ type: 'json' })
  events!: string[];

  @Property({ type: 'boolean', default: true })
  enabled: Opt<boolean> = true;

  @Property({ type: 'text', lazy: true })
  secretSealed!: string;

  @Property({ type: 'text', lazy: true, nullable: true })
  previousSecretSealed?: string | null;

  @Property({ type: 'datetime', nullable: true })
  previousSecretExpiresAt?: Date | null;

  /** When deliveries to it started failing (the first failure after a success); null while it answers. */
  @Property({ type: 'datetime', nullable: true })
  failingSince?: Date | null;

  @Property({ type: 'datetime', nullable: true })
  disabledAt?: Date | null;

  @Property({ type: 'string', length: 300, nullable: true })
  disabledReason?: string | null;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Opt<Date> = new Date();

  /** Insertion order, filled by the database: rows made in one millisecond still list in a stable order. */
  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;
}

/**
 * Something that happened to one of a user's resources, written in the transaction of the change. Every delivery
 * of it sends the same JSON, `{id, type, created_at, ...attributes, data}`: `data` given with the event is rebuilt
 * from this row each time; `data` read (the resource as its REST read shows it, `read`) is read once, when the
 * event is first sent, and that JSON kept in `body`.
 */
@Entity({ tableName: 'webhook_events' })
@Index({ properties: ['user', 'createdAt', 'seq'] })
@Index({ properties: ['resourceId', 'type', 'createdAt'] })
export class WebhookEvent {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('evt');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 64 })
  type!: string;

  /** The session, order, wallet entry or endpoint the event is about: events of one resource arrive in order. */
  @Property({ type: 'string', length: 64 })
  resourceId!: string;

  /** How to read `data` when the event is first sent: a REST read's operation and variables. */
  @Property({ type: 'json', nullable: true })
  read?: { operation: `Query.${string}`; variables: Record<string, unknown> } | null;

  /** `data` given with the event (a ledger entry, a ping), when it is not read. */
  @Property({ type: 'json', nullable: true })
  data?: unknown;

  /** Keys the body carries beside `data` (`signer_id` in signer events: which signer of the session). */
  @Property({ type: 'json', nullable: true })
  attributes?: Record<string, unknown> | null;

  @Property({ type: 'text', nullable: true })
  body?: string | null;

  @Property({ type: 'datetime', defaultRaw: 'clock_timestamp()' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/**
 * One event on its way to one endpoint. Deliveries of one resource to one endpoint go one at a time, oldest
 * first (`seq`): the head is leased while it is attempted (`leasedUntil`), retried at `nextAttemptAt`, and
 * `failed` once its retry window has closed (or its endpoint was disabled); a redelivery makes it pending again.
 */
@Entity({ tableName: 'webhook_deliveries' })
@Index({ properties: ['endpoint', 'resourceId', 'status', 'seq'] })
@Index({ properties: ['endpoint', 'createdAt', 'seq'] })
@Index({ properties: ['event'] })
@Index({ properties: ['status', 'nextAttemptAt'] })
export class WebhookDelivery {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('whd');

  @ManyToOne(() => WebhookEvent, { deleteRule: 'cascade' })
  event!: WebhookEvent;

  @ManyToOne(() => WebhookEndpoint, { deleteRule: 'cascade' })
  endpoint!: WebhookEndpoint;

  @Property({ type: 'string', length: 64 })
  resourceId!: string;

  @Property({ type: 'string', length: 16 })
  status: Opt<DeliveryStatus> = 'pending';

  @Property({ type: 'integer', default: 0 })
  attempts: Opt<number> = 0;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  nextAttemptAt: Opt<Date> = new Date();

  @Property({ type: 'datetime', nullable: true })
  leasedUntil?: Date | null;

  /** When the retry window started: the first attempt, or the last redelivery. */
  @Property({ type: 'datetime', nullable: true })
  windowStartedAt?: Date | null;

  @Property({ type: 'datetime', nullable: true })
  lastAttemptAt?: Date | null;

  @Property({ type: 'integer', nullable: true })
  lastStatusCode?: number | null;

  @Property({ type: 'string', length: 500, nullable: true })
  lastError?: string | null;

  @Property({ type: 'datetime', nullable: true })
  deliveredAt?: Date | null;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;
}

/** One POST of a delivery: when, how it was answered, and at most 1 KB of the answer. */
@Entity({ tableName: 'webhook_attempts' })
@Index({ properties: ['delivery', 'seq'] })
export class WebhookAttempt {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('wha');

  @ManyToOne(() => WebhookDelivery, { deleteRule: 'cascade' })
  delivery!: WebhookDelivery;

  @Property({ type: 'datetime' })
  attemptedAt!: Date;

  @Property({ type: 'integer', nullable: true })
  statusCode?: number | null;

  @Property({ type: 'integer' })
  durationMs!: number;

  @Property({ type: 'string', length: 1024, nullable: true })
  responseExcerpt?: string | null;

  @Property({ type: 'string', length: 500, nullable: true })
  error?: string | null;

  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;
}
