import { Migration } from '@mikro-orm/migrations';

export class Migration20261122014115_SignerJourney extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "signer_otps" ("id" varchar(64) not null, "signer_id" varchar(64) not null, "channel" varchar(8) not null, "code_hash" varchar(64) not null, "expires_at" timestamptz not null, "failed_attempts" int not null default 0, "closed_at" timestamptz null, "created_at" timestamptz not null default now(), constraint "signer_otps_pkey" primary key ("id"));`);
    this.addSql(`create index "signer_otps_signer_id_channel_created_at_index" on "signer_otps" ("signer_id", "channel", "created_at");`);

    this.addSql(`create table "notifications" ("id" varchar(64) not null, "user_id" varchar(64) not null, "session_id" varchar(64) null, "signer_id" varchar(64) null, "kind" varchar(16) not null, "channel" varchar(16) not null, "recipient" varchar(320) not null, "subject" varchar(300) null, "text_body" text not null, "html_body" text null, "mime" text null, "status" varchar(16) not null default 'queued', "provider" varchar(16) null, "attempts" int not null default 0, "last_error" text null, "created_at" timestamptz not null default now(), "sent_at" timestamptz null, constraint "notifications_pkey" primary key ("id"));`);
    this.addSql(`create index "notifications_status_created_at_index" on "notifications" ("status", "created_at");`);
    this.addSql(`create index "notifications_session_id_created_at_index" on "notifications" ("session_id", "created_at");`);

    this.addSql(`create table "esign_audit_events" ("id" varchar(64) not null, "session_id" varchar(64) not null, "signer_id" varchar(64) null, "event" varchar(32) not null, "at" timestamptz not null default clock_timestamp(), "ip" varchar(64) null, "user_agent" varchar(500) null, "details" jsonb null, "seq" bigserial, constraint "esign_audit_events_pkey" primary key ("id"));`);
    this.addSql(`create index "esign_audit_events_session_id_at_index" on "esign_audit_events" ("session_id", "at");`);

    this.addSql(`alter table "signer_otps" add constraint "signer_otps_signer_id_foreign" foreign key ("signer_id") references "esign_signers" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "notifications" add constraint "notifications_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "notifications" add constraint "notifications_session_id_foreign" foreign key ("session_id") references "esign_sessions" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "notifications" add constraint "notifications_signer_id_foreign" foreign key ("signer_id") references "esign_signers" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "esign_audit_events" add constraint "esign_audit_events_session_id_foreign" foreign key ("session_id") references "esign_sessions" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "esign_audit_events" add constraint "esign_audit_events_signer_id_foreign" foreign key ("signer_id") references "esign_signers" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "esign_signers" add column "email_verified_at" timestamptz null, add column "mobile_verified_at" timestamptz null, add column "location" jsonb null, add column "face_attempts" int not null default 0, add column "invited_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "signer_otps" cascade;`);

    this.addSql(`drop table if exists "notifications" cascade;`);

    this.addSql(`drop table if exists "esign_audit_events" cascade;`);

    this.addSql(`alter table "esign_signers" drop column "email_verified_at", drop column "mobile_verified_at", drop column "location", drop column "face_attempts", drop column "invited_at";`);
  }

}
