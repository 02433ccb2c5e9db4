import { Migration } from '@mikro-orm/migrations';

/** The origins allowed to frame an account's signing pages. */
export class Migration20261127094516_EmbedOrigins extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "users" add column "embed_origins" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "users" drop column "embed_origins";`);
  }

}
