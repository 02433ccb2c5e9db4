import { Migration } from '@mikro-orm/migrations';

export class Migration20261124040932_AdminScope extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "account_audit_events" ("id" varchar(64) not null, "subject_user_id" varchar(64) not null, "action" varchar(32) not null, "actor_user_id" varchar(64) null, "actor_token_id" varchar(64) null, "details" jsonb not null, "ip" varchar(64) null, "user_agent" varchar(500) null, "at" timestamptz not null default clock_timestamp(), "seq" bigserial, constraint "account_audit_events_pkey" primary key ("id"));`);
    this.addSql(`create index "account_audit_events_subject_user_id_seq_index" on "account_audit_events" ("subject_user_id", "seq");`);

    this.addSql(`alter table "account_audit_events" add constraint "account_audit_events_subject_user_id_foreign" foreign key ("subject_user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "users" add column "stamp_fee_paise" bigint null;`);
    this.addSql(`alter table "users" add constraint users_stamp_fee_non_negative check(stamp_fee_paise >= 0);`);

    this.addSql(`alter table "access_tokens" add column "scope" varchar(16) not null default 'user';`);
    this.addSql(`alter table "access_tokens" add constraint access_tokens_scope_known check(scope = 'user' or scope = 'admin');`);

    this.addSql(`alter table "wallet_entries" add column "actor_user_id" varchar(64) null, add column "actor_token_id" varchar(64) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "account_audit_events" cascade;`);

    this.addSql(`alter table "access_tokens" drop constraint access_tokens_scope_known;`);
    this.addSql(`alter table "access_tokens" drop column "scope";`);

    this.addSql(`alter table "users" drop constraint users_stamp_fee_non_negative;`);
    this.addSql(`alter table "users" drop column "stamp_fee_paise";`);

    this.addSql(`alter table "wallet_entries" drop column "actor_user_id", drop column "actor_token_id";`);
  }

}
