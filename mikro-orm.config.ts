import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './src/platform/db/entities';
import { migrationsList } from './src/platform/db/migrations';

/**
 * The one MikroORM configuration. Entities and migrations are listed explicitly (no folder discovery),
 * so the same configuration works from compiled JS, from vitest and from the CLI.
 */
export function createOrmOptions(clientUrl: string, poolMax = 10, logger?: (message: string) => void): Options {
  return defineConfig({
    clientUrl,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolMax },
    forceUtcTimezone: true,
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

export default createOrmOptions(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/esign');
