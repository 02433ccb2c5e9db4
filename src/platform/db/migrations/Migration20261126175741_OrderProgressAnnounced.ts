import { Migration } from '@mikro-orm/migrations';

export class Migration20261126175741_OrderProgressAnnounced extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "stamp_orders" add column "progress_announced_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "stamp_orders" drop column "progress_announced_at";`);
  }

}
