import { Migration } from '@mikro-orm/migrations';

/** A template's public signing link. */
export class Migration20261127100525_DirectLinks extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "direct_links" ("id" varchar(64) not null, "user_id" varchar(64) not null, "template_id" varchar(64) not null, "slug" varchar(64) not null, "enabled" boolean not null, "expires_at" timestamptz null, "max_uses" int null, "uses" int not null default 0, "options" jsonb not null, "created_at" timestamptz not null default now(), constraint "direct_links_pkey" primary key ("id"));`);
    this.addSql(`alter table "direct_links" add constraint "direct_links_template_id_unique" unique ("template_id");`);
    this.addSql(`alter table "direct_links" add constraint "direct_links_slug_unique" unique ("slug");`);

    this.addSql(`alter table "direct_links" add constraint "direct_links_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "direct_links" add constraint "direct_links_template_id_foreign" foreign key ("template_id") references "templates" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "direct_links" cascade;`);
  }

}
