import { Migration } from '@mikro-orm/migrations';

export class Migration20261121235336_EsignSessions extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "esign_sessions" ("id" varchar(64) not null, "user_id" varchar(64) not null, "sign_type" varchar(16) not null, "auth_mode" int not null, "backend" varchar(40) not null, "file_id" varchar(64) not null, "current_pdf_file_id" varchar(64) not null, "filename" varchar(255) not null, "folder" varchar(200) null, "allow_download" boolean not null, "archived" boolean not null default false, "expiry_seconds" int not null, "expires_at" timestamptz not null, "max_retry" int not null, "redirect_url" varchar(2048) null, "sender" varchar(200) null, "email_template_overrides" jsonb null, "signer_idx" int not null default 0, "stamp_page_count" int not null default 0, "status" varchar(16) not null default 'pending', "cancel_reason" varchar(500) null, "ended_at" timestamptz null, "created_at" timestamptz not null default now(), constraint "esign_sessions_pkey" primary key ("id"));`);
    this.addSql(`create index "esign_sessions_status_expires_at_index" on "esign_sessions" ("status", "expires_at");`);
    this.addSql(`create index "esign_sessions_user_id_created_at_index" on "esign_sessions" ("user_id", "created_at");`);

    this.addSql(`create table "esign_signers" ("id" varchar(64) not null, "session_id" varchar(64) not null, "position" int not null, "token_hash" varchar(64) not null, "token_sealed" text not null, "sign_type" varchar(16) not null, "auth_mode" int not null, "max_retry" int not null, "pfx_id" varchar(64) null, "full_name" varchar(200) not null, "email" varchar(320) null, "country_code" varchar(8) null, "mobile" varchar(20) null, "verify_email" boolean not null, "verify_mobile" boolean not null, "reason" varchar(500) null, "accept_virtual_sign" boolean not null, "verify_location" boolean not null, "location_source" varchar(8) null, "enforce_geofence" boolean not null, "latitude" double precision null, "longitude" double precision null, "radius" double precision null, "elements" jsonb not null, "name_match" jsonb not null, "face_match" jsonb not null, "notification" jsonb not null, "aadhaar_cert_details" jsonb null, "status" varchar(16) not null default 'pending', "failed_attempts" int not null default 0, "completed_at" timestamptz null, constraint "esign_signers_pkey" primary key ("id"));`);
    this.addSql(`alter table "esign_signers" add constraint "esign_signers_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "esign_signers_session_id_position_index" on "esign_signers" ("session_id", "position");`);

    this.addSql(`alter table "esign_sessions" add constraint "esign_sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "esign_sessions" add constraint "esign_sessions_file_id_foreign" foreign key ("file_id") references "files" ("id") on update cascade;`);
    this.addSql(`alter table "esign_sessions" add constraint "esign_sessions_current_pdf_file_id_foreign" foreign key ("current_pdf_file_id") references "files" ("id") on update cascade;`);

    this.addSql(`alter table "esign_signers" add constraint "esign_signers_session_id_foreign" foreign key ("session_id") references "esign_sessions" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "esign_signers" drop constraint "esign_signers_session_id_foreign";`);

    this.addSql(`drop table if exists "esign_sessions" cascade;`);

    this.addSql(`drop table if exists "esign_signers" cascade;`);
  }

}
