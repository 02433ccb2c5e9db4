import { Migration } from '@mikro-orm/migrations';

export class Migration20261122004347_SandboxEsp extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "sandbox_esp_transactions" ("id" varchar(64) not null, "signer_id" varchar(64) not null, "aadhaar_sealed" text not null, "auth_mode" int not null, "expires_at" timestamptz not null, "authenticated_at" timestamptz null, "used_at" timestamptz null, "created_at" timestamptz not null default now(), constraint "sandbox_esp_transactions_pkey" primary key ("id"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "sandbox_esp_transactions" cascade;`);
  }

}
