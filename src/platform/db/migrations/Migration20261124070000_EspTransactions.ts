import { Migration } from '@mikro-orm/migrations';

/**
 * Aadhaar signing over the CCA eSign API (issue 19): the ASP's record of each transaction with an ESP. The
 * in-process sandbox ESP's own table goes: the sandbox ESP is now a gateway that keeps its state in its pages.
 */
export class Migration20261124070000_EspTransactions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop table if exists "sandbox_esp_transactions" cascade;`);
    this.addSql(
      `create table "esp_transactions" ("txn" varchar(64) not null, "session_id" varchar(64) not null, "signer_id" varchar(64) not null, "backend" varchar(40) not null, "input_hash" varchar(64) not null, "prepared_key" varchar(300) not null, "contents_at" int not null, "contents_end" int not null, "base_file_id" varchar(64) not null, "signing_time" timestamptz not null, "status" varchar(16) not null default 'pending', "error_code" varchar(64) null, "error_message" varchar(500) null, "response_code" varchar(100) null, "created_at" timestamptz not null default now(), "expires_at" timestamptz not null, "answered_at" timestamptz null, constraint "esp_transactions_pkey" primary key ("txn"));`,
    );
    this.addSql(`create index "esp_transactions_signer_id_created_at_index" on "esp_transactions" ("signer_id", "created_at");`);
    this.addSql(
      `alter table "esp_transactions" add constraint "esp_transactions_session_id_foreign" foreign key ("session_id") references "esign_sessions" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "esp_transactions" add constraint "esp_transactions_signer_id_foreign" foreign key ("signer_id") references "esign_signers" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "esp_transactions" cascade;`);
  }
}
