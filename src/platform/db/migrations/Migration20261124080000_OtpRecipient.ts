import { Migration } from '@mikro-orm/migrations';

/**
 * A one-time code remembers (as a keyed hash) the address it went to: it proves that address only, so a signer's
 * place handed to another person leaves the former person's open codes unusable. Codes sent before this have no
 * hash and count as not open (they last ten minutes): the signer asks for a new one.
 */
export class Migration20261124080000_OtpRecipient extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "signer_otps" add column "recipient_hash" varchar(64) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "signer_otps" drop column "recipient_hash";`);
  }
}
