import { Migration } from '@mikro-orm/migrations';

export class Migration20261122001534_StampSessions extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "stamp_instances" add column "session_id" varchar(64) null;`);
    this.addSql(`alter table "stamp_instances" add constraint "stamp_instances_session_id_foreign" foreign key ("session_id") references "esign_sessions" ("id") on update cascade on delete set null;`);
    this.addSql(`create index "stamp_instances_session_id_index" on "stamp_instances" ("session_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "stamp_instances" drop constraint "stamp_instances_session_id_foreign";`);

    this.addSql(`drop index "stamp_instances_session_id_index";`);
    this.addSql(`alter table "stamp_instances" drop column "session_id";`);
  }

}
