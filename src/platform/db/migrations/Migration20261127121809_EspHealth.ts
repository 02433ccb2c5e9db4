import { Migration } from '@mikro-orm/migrations';

/** ESP failover: each ESP's recent answers, shared by every process. */
export class Migration20261127121809_EspHealth extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "esp_health" ("backend" varchar(64) not null, "consecutive_failures" int not null default 0, "failures_total" bigint not null default 0, "successes_total" bigint not null default 0, "last_failure_at" timestamptz null, "last_success_at" timestamptz null, "last_problem" text null, "skipped_until" timestamptz null, constraint "esp_health_pkey" primary key ("backend"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "esp_health" cascade;`);
  }

}
