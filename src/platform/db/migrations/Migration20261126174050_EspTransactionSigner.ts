import { Migration } from '@mikro-orm/migrations';

/**
 * An eSign transaction remembers (as its hash) the signer token it started under: an ESP's answer for a person whose
 * place was handed over meanwhile is refused, not recorded under the new person. Transactions started before this
 * have none and are judged as before (they time out within the ESP's timeout anyway).
 */
export class Migration20261126174050_EspTransactionSigner extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "esp_transactions" add column "signer_token_hash" varchar(64) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "esp_transactions" drop column "signer_token_hash";`);
  }
}
