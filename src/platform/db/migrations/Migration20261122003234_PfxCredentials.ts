import { Migration } from '@mikro-orm/migrations';

export class Migration20261122003234_PfxCredentials extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "pfx_credentials" ("id" varchar(64) not null, "user_id" varchar(64) not null, "name" varchar(255) not null, "subject" varchar(1000) not null, "issuer" varchar(1000) not null, "serial_number" varchar(100) not null, "not_before" timestamptz not null, "not_after" timestamptz not null, "sealed" text not null, "created_at" timestamptz not null default now(), "deleted_at" timestamptz null, constraint "pfx_credentials_pkey" primary key ("id"));`);
    this.addSql(`create index "pfx_credentials_user_id_created_at_index" on "pfx_credentials" ("user_id", "created_at");`);

    this.addSql(`alter table "pfx_credentials" add constraint "pfx_credentials_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "pfx_credentials" cascade;`);
  }

}
