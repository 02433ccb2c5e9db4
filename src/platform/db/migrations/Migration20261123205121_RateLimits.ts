import { Migration } from '@mikro-orm/migrations';

export class Migration20261123205121_RateLimits extends Migration {

  override async up(): Promise<void> {
    // Unlogged: counts of the current minute are worth no WAL; after a crash the quotas simply start afresh.
    this.addSql(`create unlogged table "rate_limit_counters" ("key" varchar(160) not null, "window_start" timestamptz not null, "hits" int not null, constraint "rate_limit_counters_pkey" primary key ("key", "window_start"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "rate_limit_counters" cascade;`);
  }

}
