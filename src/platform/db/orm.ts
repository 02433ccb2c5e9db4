import { MikroORM } from '@mikro-orm/postgresql';
import { createOrmOptions } from '../../../mikro-orm.config';
import type { Logger } from '../logger';

export type Orm = MikroORM;

export async function openOrm(clientUrl: string, options: { poolMax?: number; log?: Logger } = {}): Promise<Orm> {
  const log = options.log;
  const orm = await MikroORM.init(
    createOrmOptions(clientUrl, options.poolMax, (message) => log?.debug({ orm: message }, 'mikro-orm')),
  );
  const migrator = orm.getMigrator();
  const applied = await migrator.up();
  if (applied.length > 0) options.log?.info({ migrations: applied.map((m) => m.name) }, 'database migrated');
  return orm;
}
