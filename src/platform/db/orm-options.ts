import type { EntityClass } from '@mikro-orm/core';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { migrationsList } from './migrations';

/**
 * The one MikroORM configuration. Entities (the composition's, see src/modules.ts) and migrations are
 * listed explicitly (no folder discovery), so the same configuration works from compiled JS, from vitest and
 * from the MikroORM CLI (mikro-orm.config.ts).
 */
export function createOrmOptions(
  clientUrl: string,
  entities: EntityClass<any>[],
  poolMax = 10,
  logger?: (message: string) => void,
): Options {
  return defineConfig({
    clientUrl,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolMax },
    forceUtcTimezone: true,
    // Whoever opens the ORM has made the database (embedded: bootstrap; tests; create-migration). MikroORM's own check
    // looks the URL's database name up in pg_database and, not finding it, connects to `postgres` to create it: behind
    // PgBouncer the URL names a PgBouncer database, which need not be PostgreSQL's name, and start-up failed there.
    ensureDatabase: false,
    allowGlobalContext: false,
    debug: false,
    colors: false,
    ...(logger ? { logger } : {}),
    migrations: {
      tableName: 'mikro_orm_migrations',
      migrationsList,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      path: 'src/platform/db/migrations',
      pathTs: 'src/platform/db/migrations',
      emit: 'ts',
    },
  });
}
