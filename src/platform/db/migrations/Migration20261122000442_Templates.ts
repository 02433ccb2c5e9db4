import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000442_Templates extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "templates" ("id" varchar(64) not null, "user_id" varchar(64) not null, "name" varchar(200) not null, "file_id" varchar(64) not null, "folder" varchar(200) null, "version" int not null default 1, "signers" jsonb not null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "deleted_at" timestamptz null, constraint "templates_pkey" primary key ("id"));`);
    this.addSql(`create index "templates_user_id_created_at_index" on "templates" ("user_id", "created_at");`);

    this.addSql(`alter table "templates" add constraint "templates_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "templates" add constraint "templates_file_id_foreign" foreign key ("file_id") references "files" ("id") on update cascade;`);

    this.addSql(`alter table "esign_sessions" add column "template_id" varchar(64) null, add column "template_version" int null;`);
    this.addSql(`alter table "esign_sessions" add constraint "esign_sessions_template_id_foreign" foreign key ("template_id") references "templates" ("id") on update cascade on delete set null;`);
    this.addSql(`create index "esign_sessions_template_id_index" on "esign_sessions" ("template_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "esign_sessions" drop constraint "esign_sessions_template_id_foreign";`);

    this.addSql(`drop table if exists "templates" cascade;`);

    this.addSql(`drop index "esign_sessions_template_id_index";`);
    this.addSql(`alter table "esign_sessions" drop column "template_id", drop column "template_version";`);
  }

}
