import { Migration } from '@mikro-orm/migrations';

/** A signer may decline, with a reason; the session then ends `declined` (issue 21). */
export class Migration20261124050000_SignerDecline extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "esign_signers" add column "decline_reason" varchar(500) null, add column "declined_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "esign_signers" drop column "decline_reason", drop column "declined_at";`);
  }
}
