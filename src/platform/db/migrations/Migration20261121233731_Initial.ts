import { Migration } from '@mikro-orm/migrations';

export class Migration20261121233731_Initial extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "users" ("id" varchar(64) not null, "email" varchar(320) not null, "created_at" timestamptz not null default now(), constraint "users_pkey" primary key ("id"));`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);

    this.addSql(`create table "files" ("id" varchar(64) not null, "user_id" varchar(64) not null, "kind" varchar(8) not null, "name" varchar(255) not null, "mime" varchar(100) not null, "size_bytes" bigint not null, "sha256" varchar(64) not null, "page_count" int null, "width_px" int null, "height_px" int null, "storage_key" varchar(300) not null, "created_at" timestamptz not null default now(), constraint "files_pkey" primary key ("id"));`);
    this.addSql(`create index "files_user_id_created_at_index" on "files" ("user_id", "created_at");`);

    this.addSql(`create table "access_tokens" ("id" varchar(64) not null, "user_id" varchar(64) not null, "token_hash" varchar(64) not null, "label" varchar(200) null, "created_at" timestamptz not null default now(), "expires_at" timestamptz null, "revoked_at" timestamptz null, constraint "access_tokens_pkey" primary key ("id"));`);
    this.addSql(`create index "access_tokens_user_id_index" on "access_tokens" ("user_id");`);
    this.addSql(`alter table "access_tokens" add constraint "access_tokens_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "wallets" ("user_id" varchar(64) not null, "balance_paise" bigint not null default 0, "updated_at" timestamptz not null default now(), constraint "wallets_pkey" primary key ("user_id"), constraint wallets_balance_non_negative check (balance_paise >= 0));`);

    this.addSql(`create table "wallet_entries" ("id" varchar(64) not null, "user_id" varchar(64) not null, "kind" varchar(16) not null, "amount_paise" bigint not null, "balance_after_paise" bigint not null, "description" varchar(500) not null, "reference" varchar(64) null, "created_at" timestamptz not null default now(), constraint "wallet_entries_pkey" primary key ("id"));`);
    this.addSql(`create index "wallet_entries_user_id_created_at_index" on "wallet_entries" ("user_id", "created_at");`);

    this.addSql(`alter table "files" add constraint "files_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "access_tokens" add constraint "access_tokens_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "wallets" add constraint "wallets_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "wallet_entries" add constraint "wallet_entries_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "files" drop constraint "files_user_id_foreign";`);

    this.addSql(`alter table "access_tokens" drop constraint "access_tokens_user_id_foreign";`);

    this.addSql(`alter table "wallets" drop constraint "wallets_user_id_foreign";`);

    this.addSql(`alter table "wallet_entries" drop constraint "wallet_entries_user_id_foreign";`);

    this.addSql(`drop table if exists "users" cascade;`);

    this.addSql(`drop table if exists "files" cascade;`);

    this.addSql(`drop table if exists "access_tokens" cascade;`);

    this.addSql(`drop table if exists "wallets" cascade;`);

    this.addSql(`drop table if exists "wallet_entries" cascade;`);
  }

}
