import { Migration } from '@mikro-orm/migrations';

export class Migration20261122003820_Signing extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "platform_keys" ("name" varchar(64) not null, "sealed" text not null, "created_at" timestamptz not null default now(), constraint "platform_keys_pkey" primary key ("name"));`);

    this.addSql(`alter table "esign_sessions" add column "prepared_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "platform_keys" cascade;`);

    this.addSql(`alter table "esign_sessions" drop column "prepared_at";`);
  }

}
