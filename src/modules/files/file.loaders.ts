import DataLoader from 'dataloader';
import type { LoaderFactory } from '../../platform/graphql/loaders';
import { StoredFile } from './stored-file.entity';

declare module '../../platform/graphql/loaders' {
  interface Loaders {
    fileById: DataLoader<string, StoredFile | null>;
  }
}

/**
 * Per-request batch loaders over stored files: every nested read of a kind within one request costs one statement,
 * however many parents ask. Owner checks happen where the parent was loaded; children follow it.
 */
export const fileLoaders: LoaderFactory = (entityManager) => ({
  fileById: new DataLoader<string, StoredFile | null>(async (ids) => {
    const files = await entityManager().find(StoredFile, { id: [...ids] });
    const byId = new Map(files.map((file) => [file.id, file]));
    return ids.map((id) => byId.get(id) ?? null);
  }),
});
