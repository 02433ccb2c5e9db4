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
  const migrator = orm.getMigrator();
  const applied = await migrator.up();
  if (applied.length > 0) options.log?.info({ migrations: applied.map((m) => m.name) }, 'database migrated');
  return orm;
}
