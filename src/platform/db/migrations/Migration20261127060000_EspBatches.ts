import { Migration } from '@mikro-orm/migrations';

/** A signer with more documents than one eSign transaction carries signs in batches: each transaction says which. */
export class Migration20261127060000_EspBatches extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "esp_transactions" add column "batch" int not null default 1, add column "batch_count" int not null default 1, add column "certificate_pem" text null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "esp_transactions" where "status" = 'held';`);
    this.addSql(
      `alter table "esp_transactions" drop column "batch", drop column "batch_count", drop column "certificate_pem";`,
    );
  }
}
