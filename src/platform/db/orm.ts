import type { EntityClass } from '@mikro-orm/core';
import { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../logger';
import { createOrmOptions } from './orm-options';

export type Orm = MikroORM;

/** Opens the ORM over the given entities (the composition's) and applies the committed migrations. */
export async function openOrm(
  clientUrl: string,
  options: { entities: EntityClass<any>[]; poolMax?: number; log?: Logger },
): Promise<Orm> {
  const log = options.log;
  const orm = await MikroORM.init(
    createOrmOptions(clientUrl, options.entities, options.poolMax, (message) => log?.debug({ orm: message }, 'mikro-orm')),
  );
  // The migrator is asked only when a migration is missing: before anything it checks the URL's database name in
  // pg_database and tries to create it when absent, which fails behind PgBouncer under a database name of its own
  // (docs/scaling.md: migrate straight to PostgreSQL, then start the processes behind PgBouncer).
  if ((await pendingMigrations(orm)) > 0) {
    const applied = await orm.getMigrator().up();
    if (applied.length > 0) options.log?.info({ migrations: applied.map((m) => m.name) }, 'database migrated');
  }
  return orm;
}

/** How many committed migrations the database has not recorded (all of them when it has no migrations table). */
async function pendingMigrations(orm: Orm): Promise<number> {
  const { tableName = 'mikro_orm_migrations', migrationsList = [] } = orm.config.get('migrations');
  const connection = orm.em.getConnection();
  const [table] = await connection.execute<{ found: string | null }[]>('select to_regclass(?)::text as found', [tableName]);
  if (!table?.found) return migrationsList.length;
  const recorded = await connection.execute<{ name: string }[]>(`select name from ${table.found}`);
  const done = new Set(recorded.map((row) => row.name));
  return migrationsList.filter((migration) => !done.has(migration.name)).length;
}
