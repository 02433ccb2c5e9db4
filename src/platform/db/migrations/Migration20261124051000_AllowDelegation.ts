import { Migration } from '@mikro-orm/migrations';

/** A session may let its signers hand their place to someone else (issue 21). */
export class Migration20261124051000_AllowDelegation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "esign_sessions" add column "allow_delegation" boolean not null default false;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "esign_sessions" drop column "allow_delegation";`);
  }
}
