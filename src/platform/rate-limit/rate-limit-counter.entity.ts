import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** Requests of one caller in one fixed window, summed over every process of the service. */
@Entity({ tableName: 'rate_limit_counters' })
export class RateLimitCounter {
  /** `<policy>:<caller>`, e.g. `token:tok_...`, `signer:<hash>`, `address:203.0.113.7`. */
  @PrimaryKey({ type: 'string', length: 160 })
  key!: string;

  @PrimaryKey({ type: 'datetime' })
  windowStart!: Date;

  @Property({ type: 'integer' })
  hits!: number;
}
