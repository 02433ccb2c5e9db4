import { Migration } from '@mikro-orm/migrations';

/** Bulk send: a bulk (one template, many recipients) and its rows, each made into one session by the bulk's job. */
export class Migration20261127070000_Bulks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "bulks" (
      "id" varchar(64) not null, "user_id" varchar(64) not null, "template_id" varchar(64) not null,
      "template_version" int not null, "status" varchar(16) not null default 'queued', "source" varchar(8) not null,
      "row_count" int not null, "options" jsonb not null, "created_at" timestamptz not null default now(),
      "finished_at" timestamptz null, "progress_announced_at" timestamptz null, "heartbeat_at" timestamptz null,
      constraint "bulks_pkey" primary key ("id"));`);
    this.addSql(`create index "bulks_user_id_created_at_index" on "bulks" ("user_id", "created_at");`);
    this.addSql(
      `alter table "bulks" add constraint "bulks_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "bulks" add constraint "bulks_template_id_foreign" foreign key ("template_id") references "templates" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`create table "bulk_rows" (
      "bulk_id" varchar(64) not null, "position" int not null, "key" varchar(200) null, "input" jsonb not null,
      "status" varchar(16) not null default 'queued', "session_id" varchar(64) null, "error" jsonb null,
      "done_at" timestamptz null, constraint "bulk_rows_pkey" primary key ("bulk_id", "position"));`);
    this.addSql(`create index "bulk_rows_bulk_id_status_position_index" on "bulk_rows" ("bulk_id", "status", "position");`);
    this.addSql(
      `alter table "bulk_rows" add constraint "bulk_rows_bulk_id_foreign" foreign key ("bulk_id") references "bulks" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "bulk_rows" cascade;`);
    this.addSql(`drop table if exists "bulks" cascade;`);
  }
}
