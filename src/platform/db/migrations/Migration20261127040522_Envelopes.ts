import { Migration } from '@mikro-orm/migrations';

export class Migration20261127040522_Envelopes extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "esign_documents" ("id" varchar(64) not null, "session_id" varchar(64) not null, "position" int not null, "name" varchar(255) not null, "file_id" varchar(64) not null, "current_pdf_file_id" varchar(64) not null, constraint "esign_documents_pkey" primary key ("id"));`);
    this.addSql(`alter table "esign_documents" add constraint "esign_documents_session_id_position_unique" unique ("session_id", "position");`);

    this.addSql(`alter table "esign_documents" add constraint "esign_documents_session_id_foreign" foreign key ("session_id") references "esign_sessions" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "esign_documents" add constraint "esign_documents_file_id_foreign" foreign key ("file_id") references "files" ("id") on update cascade;`);
    this.addSql(`alter table "esign_documents" add constraint "esign_documents_current_pdf_file_id_foreign" foreign key ("current_pdf_file_id") references "files" ("id") on update cascade;`);

    this.addSql(`alter table "esign_sessions" add column "stamp_document" int not null default 0;`);

    // Every session made before envelopes is a one-document envelope (ids as newId makes them: 128 random bits).
    this.addSql(`insert into "esign_documents" ("id", "session_id", "position", "name", "file_id", "current_pdf_file_id")
      select 'doc_' || replace(gen_random_uuid()::text, '-', ''), "id", 0, "filename", "file_id", "current_pdf_file_id"
      from "esign_sessions";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "esign_documents" cascade;`);

    this.addSql(`alter table "esign_sessions" drop column "stamp_document";`);
  }

}
