import { Migration } from '@mikro-orm/migrations';

/** Sessions sign in array order (`sequential`) or all at once (`parallel`) (issue 21). */
export class Migration20261124053000_SigningOrder extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "esign_sessions" add column "signing_order" varchar(16) not null default 'sequential';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "esign_sessions" drop column "signing_order";`);
  }
}
