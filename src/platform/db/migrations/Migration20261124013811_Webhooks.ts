import { Migration } from '@mikro-orm/migrations';

export class Migration20261124013811_Webhooks extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "webhook_endpoints" ("id" varchar(64) not null, "user_id" varchar(64) not null, "url" varchar(2048) not null, "description" varchar(500) null, "events" jsonb not null, "enabled" boolean not null default true, "secret_sealed" text not null, "previous_secret_sealed" text null, "previous_secret_expires_at" timestamptz null, "failing_since" timestamptz null, "disabled_at" timestamptz null, "disabled_reason" varchar(300) null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "seq" bigserial, constraint "webhook_endpoints_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_endpoints_user_id_created_at_seq_index" on "webhook_endpoints" ("user_id", "created_at", "seq");`);

    this.addSql(`create table "webhook_events" ("id" varchar(64) not null, "user_id" varchar(64) not null, "type" varchar(64) not null, "resource_id" varchar(64) not null, "read" jsonb null, "data" jsonb null, "attributes" jsonb null, "body" text null, "created_at" timestamptz not null default clock_timestamp(), "seq" bigserial, constraint "webhook_events_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_events_resource_id_type_created_at_index" on "webhook_events" ("resource_id", "type", "created_at");`);
    this.addSql(`create index "webhook_events_user_id_created_at_seq_index" on "webhook_events" ("user_id", "created_at", "seq");`);

    this.addSql(`create table "webhook_deliveries" ("id" varchar(64) not null, "event_id" varchar(64) not null, "endpoint_id" varchar(64) not null, "resource_id" varchar(64) not null, "status" varchar(16) not null default 'pending', "attempts" int not null default 0, "next_attempt_at" timestamptz not null default now(), "leased_until" timestamptz null, "window_started_at" timestamptz null, "last_attempt_at" timestamptz null, "last_status_code" int null, "last_error" varchar(500) null, "delivered_at" timestamptz null, "created_at" timestamptz not null default now(), "seq" bigserial, constraint "webhook_deliveries_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_status_next_attempt_at_index" on "webhook_deliveries" ("status", "next_attempt_at");`);
    this.addSql(`create index "webhook_deliveries_event_id_index" on "webhook_deliveries" ("event_id");`);
    this.addSql(`create index "webhook_deliveries_endpoint_id_created_at_seq_index" on "webhook_deliveries" ("endpoint_id", "created_at", "seq");`);
    this.addSql(`create index "webhook_deliveries_endpoint_id_resource_id_status_seq_index" on "webhook_deliveries" ("endpoint_id", "resource_id", "status", "seq");`);

    this.addSql(`create table "webhook_attempts" ("id" varchar(64) not null, "delivery_id" varchar(64) not null, "attempted_at" timestamptz not null, "status_code" int null, "duration_ms" int not null, "response_excerpt" varchar(1024) null, "error" varchar(500) null, "seq" bigserial, constraint "webhook_attempts_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_attempts_delivery_id_seq_index" on "webhook_attempts" ("delivery_id", "seq");`);

    this.addSql(`alter table "webhook_endpoints" add constraint "webhook_endpoints_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "webhook_events" add constraint "webhook_events_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id") references "webhook_events" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "webhook_attempts" add constraint "webhook_attempts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_endpoint_id_foreign";`);

    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_event_id_foreign";`);

    this.addSql(`alter table "webhook_attempts" drop constraint "webhook_attempts_delivery_id_foreign";`);

    this.addSql(`drop table if exists "webhook_endpoints" cascade;`);

    this.addSql(`drop table if exists "webhook_events" cascade;`);

    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);

    this.addSql(`drop table if exists "webhook_attempts" cascade;`);
  }

}
