import { Migration } from '@mikro-orm/migrations';

/** A signer's language: the language of their messages (null: not set, English). */
export class Migration20261201191113_SignerLanguage extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "esign_signers" add column "language" varchar(8) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "esign_signers" drop column "language";`);
  }

}
