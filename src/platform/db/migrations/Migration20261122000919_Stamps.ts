import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000919_Stamps extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "stamp_states" ("code" varchar(4) not null, "name" varchar(100) not null, constraint "stamp_states_pkey" primary key ("code"));`);

    this.addSql(`create table "stamp_articles" ("id" varchar(100) not null, "state_code" varchar(4) not null, "name" varchar(200) not null, "description" varchar(500) not null, constraint "stamp_articles_pkey" primary key ("id"));`);
    this.addSql(`create index "stamp_articles_state_code_index" on "stamp_articles" ("state_code");`);

    this.addSql(`create table "stamp_orders" ("id" varchar(64) not null, "user_id" varchar(64) not null, "state_code" varchar(4) not null, "article_id" varchar(100) not null, "first_party_name" varchar(200) not null, "second_party_name" varchar(200) not null, "duty_paise" bigint not null, "consideration_paise" bigint not null, "description" varchar(500) null, "first_party_address" varchar(500) null, "quantity" int not null, "mock" boolean not null, "fee_paise" bigint not null, "charged_paise" bigint not null, "idempotency_key" varchar(200) null, "created_at" timestamptz not null default now(), constraint "stamp_orders_pkey" primary key ("id"));`);
    this.addSql(`create index "stamp_orders_user_id_created_at_index" on "stamp_orders" ("user_id", "created_at");`);
    this.addSql(`alter table "stamp_orders" add constraint "stamp_orders_user_id_idempotency_key_unique" unique ("user_id", "idempotency_key");`);

    this.addSql(`create table "stamp_instances" ("id" varchar(64) not null, "order_id" varchar(64) not null, "user_id" varchar(64) not null, "state_code" varchar(4) not null, "article_id" varchar(100) not null, "duty_paise" bigint not null, "status" varchar(16) not null default 'pending', "serial" int not null, "claim_expires_at" timestamptz null, "certificate_number" varchar(40) null, "verification_code" varchar(20) null, "pdf_file_id" varchar(64) null, "issued_at" timestamptz null, "rejected_reason" varchar(300) null, "created_at" timestamptz not null default now(), constraint "stamp_instances_pkey" primary key ("id"));`);
    this.addSql(`create index "stamp_instances_user_id_state_code_article_id_stat_8ab62_index" on "stamp_instances" ("user_id", "state_code", "article_id", "status", "duty_paise");`);
    this.addSql(`create index "stamp_instances_order_id_status_index" on "stamp_instances" ("order_id", "status");`);

    this.addSql(`alter table "stamp_articles" add constraint "stamp_articles_state_code_foreign" foreign key ("state_code") references "stamp_states" ("code") on update cascade;`);

    this.addSql(`alter table "stamp_orders" add constraint "stamp_orders_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "stamp_instances" add constraint "stamp_instances_order_id_foreign" foreign key ("order_id") references "stamp_orders" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "stamp_instances" add constraint "stamp_instances_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "stamp_instances" add constraint "stamp_instances_pdf_file_id_foreign" foreign key ("pdf_file_id") references "files" ("id") on update cascade on delete set null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "stamp_articles" drop constraint "stamp_articles_state_code_foreign";`);

    this.addSql(`alter table "stamp_instances" drop constraint "stamp_instances_order_id_foreign";`);

    this.addSql(`drop table if exists "stamp_states" cascade;`);

    this.addSql(`drop table if exists "stamp_articles" cascade;`);

    this.addSql(`drop table if exists "stamp_orders" cascade;`);

    this.addSql(`drop table if exists "stamp_instances" cascade;`);
  }

}
