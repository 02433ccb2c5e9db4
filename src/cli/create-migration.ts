/**
 * `npm run migration:create`: starts a throwaway embedded PostgreSQL, applies the committed migrations,
 * and writes a new migration with the difference between them and the entities. Add the new class to
 * migrations/index.ts afterwards.
 */
import 'reflect-metadata';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { composition } from '../modules';
import { databaseUrl, ensureDatabase, startEmbeddedPostgres } from '../platform/db/embedded-postgres';
import { createOrmOptions } from '../platform/db/orm-options';

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'esign-migration-'));
  await chmod(dir, 0o755); // postgres runs as its own user when we are root
  const cluster = await startEmbeddedPostgres(path.join(dir, 'pg'));
  try {
    await ensureDatabase(cluster.adminUrl, 'migration');
    const options = createOrmOptions(databaseUrl(cluster.adminUrl, 'migration'), composition.entities);
    options.migrations!.path = path.resolve('src/platform/db/migrations');
    const orm = await MikroORM.init(options);
    try {
      await orm.getMigrator().up();
      const result = await orm
        .getMigrator()
        .createMigration(path.resolve('src/platform/db/migrations'), false, false, process.argv[2]);
      console.log(result.fileName ? `written: src/platform/db/migrations/${result.fileName}` : 'no changes');
    } finally {
      await orm.close();
    }
  } finally {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
