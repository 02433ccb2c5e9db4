import { composition } from './src/modules';
import { createOrmOptions } from './src/platform/db/orm-options';

/** For the MikroORM CLI: the service's own configuration over every entity of the composition. */
export default createOrmOptions(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/esign', composition.entities);
