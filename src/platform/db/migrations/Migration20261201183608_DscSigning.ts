import { Migration } from '@mikro-orm/migrations';

/** DSC signing: a signer's certificate rule, the transactions between the two steps, the sandbox DSC CA's revocations. */
export class Migration20261201183608_DscSigning extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "sandbox_revoked_certificates" ("serial" varchar(64) not null, "revoked_at" timestamptz not null default now(), constraint "sandbox_revoked_certificates_pkey" primary key ("serial"));`);

    this.addSql(`create table "dsc_transactions" ("txn" varchar(64) not null, "session_id" varchar(64) not null, "signer_id" varchar(64) not null, "signer_token_hash" varchar(64) not null, "certificate_pem" text not null, "chain_pems" jsonb not null, "documents" jsonb not null, "signing_time" timestamptz not null, "status" varchar(16) not null default 'pending', "error_code" varchar(64) null, "error_message" varchar(500) null, "created_at" timestamptz not null default now(), "expires_at" timestamptz not null, "answered_at" timestamptz null, constraint "dsc_transactions_pkey" primary key ("txn"));`);
    this.addSql(`create index "dsc_transactions_signer_id_created_at_index" on "dsc_transactions" ("signer_id", "created_at");`);

    this.addSql(`alter table "dsc_transactions" add constraint "dsc_transactions_session_id_foreign" foreign key ("session_id") references "esign_sessions" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "dsc_transactions" add constraint "dsc_transactions_signer_id_foreign" foreign key ("signer_id") references "esign_signers" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "esign_signers" add column "dsc_rule" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "sandbox_revoked_certificates" cascade;`);

    this.addSql(`drop table if exists "dsc_transactions" cascade;`);

    this.addSql(`alter table "esign_signers" drop column "dsc_rule";`);
  }

}
