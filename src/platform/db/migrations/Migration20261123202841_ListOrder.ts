import { Migration } from '@mikro-orm/migrations';

export class Migration20261123202841_ListOrder extends Migration {

  override async up(): Promise<void> {
    this.addSql(`drop index "files_user_id_created_at_index";`);

    this.addSql(`alter table "files" add column "seq" bigserial;`);
    this.addSql(`create index "files_user_id_created_at_seq_index" on "files" ("user_id", "created_at", "seq");`);

    this.addSql(`drop index "templates_user_id_created_at_index";`);

    this.addSql(`alter table "templates" add column "seq" bigserial;`);
    this.addSql(`create index "templates_user_id_created_at_seq_index" on "templates" ("user_id", "created_at", "seq");`);

    this.addSql(`drop index "stamp_orders_user_id_created_at_index";`);

    this.addSql(`alter table "stamp_orders" add column "seq" bigserial;`);
    this.addSql(`create index "stamp_orders_user_id_created_at_seq_index" on "stamp_orders" ("user_id", "created_at", "seq");`);

    this.addSql(`drop index "pfx_credentials_user_id_created_at_index";`);

    this.addSql(`alter table "pfx_credentials" add column "seq" bigserial;`);
    this.addSql(`create index "pfx_credentials_user_id_created_at_seq_index" on "pfx_credentials" ("user_id", "created_at", "seq");`);

    this.addSql(`drop index "esign_sessions_user_id_created_at_index";`);

    this.addSql(`alter table "esign_sessions" add column "seq" bigserial;`);
    this.addSql(`create index "esign_sessions_user_id_created_at_seq_index" on "esign_sessions" ("user_id", "created_at", "seq");`);

    this.addSql(`drop index "notifications_session_id_created_at_index";`);

    this.addSql(`alter table "notifications" add column "seq" bigserial;`);
    this.addSql(`create index "notifications_session_id_created_at_seq_index" on "notifications" ("session_id", "created_at", "seq");`);

    this.addSql(`drop index "wallet_entries_user_id_created_at_index";`);

    this.addSql(`alter table "wallet_entries" add column "seq" bigserial;`);
    this.addSql(`create index "wallet_entries_user_id_created_at_seq_index" on "wallet_entries" ("user_id", "created_at", "seq");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "esign_sessions_user_id_created_at_seq_index";`);
    this.addSql(`alter table "esign_sessions" drop column "seq";`);

    this.addSql(`create index "esign_sessions_user_id_created_at_index" on "esign_sessions" ("user_id", "created_at");`);

    this.addSql(`drop index "files_user_id_created_at_seq_index";`);
    this.addSql(`alter table "files" drop column "seq";`);

    this.addSql(`create index "files_user_id_created_at_index" on "files" ("user_id", "created_at");`);

    this.addSql(`drop index "notifications_session_id_created_at_seq_index";`);
    this.addSql(`alter table "notifications" drop column "seq";`);

    this.addSql(`create index "notifications_session_id_created_at_index" on "notifications" ("session_id", "created_at");`);

    this.addSql(`drop index "pfx_credentials_user_id_created_at_seq_index";`);
    this.addSql(`alter table "pfx_credentials" drop column "seq";`);

    this.addSql(`create index "pfx_credentials_user_id_created_at_index" on "pfx_credentials" ("user_id", "created_at");`);

    this.addSql(`drop index "stamp_orders_user_id_created_at_seq_index";`);
    this.addSql(`alter table "stamp_orders" drop column "seq";`);

    this.addSql(`create index "stamp_orders_user_id_created_at_index" on "stamp_orders" ("user_id", "created_at");`);

    this.addSql(`drop index "templates_user_id_created_at_seq_index";`);
    this.addSql(`alter table "templates" drop column "seq";`);

    this.addSql(`create index "templates_user_id_created_at_index" on "templates" ("user_id", "created_at");`);

    this.addSql(`drop index "wallet_entries_user_id_created_at_seq_index";`);
    this.addSql(`alter table "wallet_entries" drop column "seq";`);

    this.addSql(`create index "wallet_entries_user_id_created_at_index" on "wallet_entries" ("user_id", "created_at");`);
  }

}
