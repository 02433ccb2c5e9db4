import { Migration } from '@mikro-orm/migrations';

/** Tokens an account manages itself: scopes, last use, rotation with grace; browser tokens for one resource. */
export class Migration20261127092059_AccountTokens extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "access_tokens" drop constraint access_tokens_scope_known;`);

    this.addSql(`alter table "access_tokens" add column "previous_token_hash" varchar(64) null, add column "previous_expires_at" timestamptz null, add column "scopes" jsonb null, add column "resource_id" varchar(64) null, add column "last_used_at" timestamptz null;`);
    this.addSql(`create index "access_tokens_previous_token_hash_index" on "access_tokens" ("previous_token_hash");`);
    this.addSql(`alter table "access_tokens" add constraint access_tokens_browser_resource check(scope <> 'browser' or resource_id is not null);`);
    this.addSql(`alter table "access_tokens" add constraint access_tokens_scope_known check(scope = 'user' or scope = 'admin' or scope = 'browser');`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "access_tokens_previous_token_hash_index";`);
    this.addSql(`alter table "access_tokens" drop constraint access_tokens_browser_resource;`);
    this.addSql(`alter table "access_tokens" drop constraint access_tokens_scope_known;`);
    this.addSql(`alter table "access_tokens" drop column "previous_token_hash", drop column "previous_expires_at", drop column "scopes", drop column "resource_id", drop column "last_used_at";`);

    this.addSql(`alter table "access_tokens" add constraint access_tokens_scope_known check((scope = 'user'::text) OR (scope = 'admin'::text));`);
  }

}
