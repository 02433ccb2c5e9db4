import { Migration } from '@mikro-orm/migrations';

/** An eSign transaction signs several documents (one InputHash each): the single document's columns become a list. */
export class Migration20261127050000_EspTransactionDocuments extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "esp_transactions" add column "documents" jsonb null;`);
    this.addSql(`update "esp_transactions" t set "documents" = jsonb_build_array(jsonb_build_object(
        'id', '1', 'document_id', d."id", 'position', 0, 'input_hash', t."input_hash", 'prepared_key', t."prepared_key",
        'contents_at', t."contents_at", 'contents_end', t."contents_end", 'base_file_id', t."base_file_id"))
      from "esign_documents" d where d."session_id" = t."session_id" and d."position" = 0;`);
    this.addSql(`delete from "esp_transactions" where "documents" is null;`);
    this.addSql(`alter table "esp_transactions" alter column "documents" set not null;`);
    this.addSql(
      `alter table "esp_transactions" drop column "input_hash", drop column "prepared_key", drop column "contents_at", drop column "contents_end", drop column "base_file_id";`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "esp_transactions" add column "input_hash" varchar(64) null, add column "prepared_key" varchar(300) null, add column "contents_at" int null, add column "contents_end" int null, add column "base_file_id" varchar(64) null;`,
    );
    this.addSql(`update "esp_transactions" set "input_hash" = "documents"->0->>'input_hash', "prepared_key" = "documents"->0->>'prepared_key',
      "contents_at" = ("documents"->0->>'contents_at')::int, "contents_end" = ("documents"->0->>'contents_end')::int,
      "base_file_id" = "documents"->0->>'base_file_id';`);
    this.addSql(`alter table "esp_transactions" drop column "documents";`);
  }
}
