import { Migration } from '@mikro-orm/migrations';

/** A session's certificate of completion, and whether it is appended to the signed PDF (issue 21). */
export class Migration20261124060000_CompletionCertificate extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "esign_sessions" add column "append_certificate" boolean not null default false;`);
    this.addSql(`alter table "esign_sessions" add column "completion_certificate_file_id" varchar(64) null;`);
    this.addSql(
      `alter table "esign_sessions" add constraint "esign_sessions_completion_certificate_file_id_foreign" foreign key ("completion_certificate_file_id") references "files" ("id") on update cascade on delete set null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "esign_sessions" drop constraint "esign_sessions_completion_certificate_file_id_foreign";`);
    this.addSql(`alter table "esign_sessions" drop column "completion_certificate_file_id";`);
    this.addSql(`alter table "esign_sessions" drop column "append_certificate";`);
  }
}
