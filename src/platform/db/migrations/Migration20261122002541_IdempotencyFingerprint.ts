import { Migration } from '@mikro-orm/migrations';

export class Migration20261122002541_IdempotencyFingerprint extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "stamp_orders" add column "request_fingerprint" varchar(64) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "stamp_orders" drop column "request_fingerprint";`);
  }

}
