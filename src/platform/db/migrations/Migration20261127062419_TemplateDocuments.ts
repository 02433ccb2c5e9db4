import { Migration } from '@mikro-orm/migrations';

/** A template holds ordered documents ({file_id, name}); `file_id` stays the first's. */
export class Migration20261127062419_TemplateDocuments extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "templates" add column "documents" jsonb null;`);
    // Every template made before envelopes is a one-document template, named as its upload (as a session would be).
    this.addSql(`update "templates" t set "documents" = jsonb_build_array(jsonb_build_object('file_id', f."id", 'name', f."name"))
      from "files" f where f."id" = t."file_id";`);
    this.addSql(`alter table "templates" alter column "documents" set not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "templates" drop column "documents";`);
  }

}
