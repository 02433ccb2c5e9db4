import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printAppSchema } from '../../src/cli/emit-schema';
import { composition } from '../../src/modules';
import { openOrm } from '../../src/platform/db/orm';
import { createOrmOptions } from '../../src/platform/db/orm-options';
import { createTestDatabase } from '../helpers/app';

describe('generated artefacts', () => {
  it('schema.graphql is what the code generates (run `npm run schema:emit` when this fails)', async () => {
    const committed = await readFile(path.resolve(__dirname, '../../schema.graphql'), 'utf8');
    expect(committed).toBe(await printAppSchema());
  });
});

describe('migrations', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database.drop());

  it('bring an empty database to exactly what the entities describe (run `npm run migration:create` when this fails)', async () => {
    const migrated = await openOrm(database.url, { entities: composition.entities });
    await migrated.close();
    const orm = await MikroORM.init(createOrmOptions(database.url, composition.entities));
    try {
      const diff = await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
      expect(diff.trim()).toBe('');
    } finally {
      await orm.close();
    }
  });
});
