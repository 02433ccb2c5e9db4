import { Entity, PrimaryKey, Property, type Opt } from '@mikro-orm/core';

/**
 * How one ESP has answered this service lately, shared by every API process through the database: written with
 * one upsert per outcome (esp-health.ts), so no process's memory decides where signers are sent.
 */
@Entity({ tableName: 'esp_health' })
export class EspHealth {
  /** The ESP backend's name (ESP_<NAME>_*, in lower case). */
  @PrimaryKey({ type: 'string', length: 64 })
  backend!: string;

  /** Failures since its last success; at ESP_FAILURES_BEFORE_SKIP it is skipped until `skippedUntil`. */
  @Property({ type: 'integer', default: 0 })
  consecutiveFailures: Opt<number> = 0;

  @Property({ type: 'bigint', default: 0 })
  failuresTotal: Opt<string> = '0';

  @Property({ type: 'bigint', default: 0 })
  successesTotal: Opt<string> = '0';

  @Property({ type: 'datetime', nullable: true })
  lastFailureAt?: Date | null;

  @Property({ type: 'datetime', nullable: true })
  lastSuccessAt?: Date | null;

  /** What the last failure was (a refused connection, an HTTP status, a timeout), as the signer's answer said. */
  @Property({ type: 'text', nullable: true })
  lastProblem?: string | null;

  @Property({ type: 'datetime', nullable: true })
  skippedUntil?: Date | null;
}
