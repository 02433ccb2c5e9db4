import { Migration } from '@mikro-orm/migrations';

/** Reminders to the signer whose turn it is (issue 21): per session how often and how many, per signer how many so far. */
export class Migration20261124052000_Reminders extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "esign_sessions" add column "reminder_interval_hours" int null, add column "reminder_max" int not null default 3;`);
    this.addSql(`alter table "esign_signers" add column "reminders_sent" int not null default 0, add column "last_reminded_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "esign_sessions" drop column "reminder_interval_hours", drop column "reminder_max";`);
    this.addSql(`alter table "esign_signers" drop column "reminders_sent", drop column "last_reminded_at";`);
  }
}
