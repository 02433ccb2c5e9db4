import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { StoredFile } from '../../modules/files/stored-file.entity';
import { Signer } from '../../modules/esign/signer.entity';

/**
 * Per-request batch loaders: every nested read of a kind within one request costs one statement,
 * however many parents ask. Owner checks happen where the parent was loaded; children follow it.
 */
export function createLoaders(em: EntityManager) {
  return {
    fileById: new DataLoader<string, StoredFile | null>(async (ids) => {
      const files = await em.find(StoredFile, { id: [...ids] });
      const byId = new Map(files.map((file) => [file.id, file]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    signersBySession: new DataLoader<string, Signer[]>(async (sessionIds) => {
      const signers = await em.find(Signer, { session: [...sessionIds] }, { orderBy: { position: 'asc' } });
      const bySession = new Map<string, Signer[]>(sessionIds.map((id) => [id, []]));
      for (const signer of signers) bySession.get(signer.session.id)!.push(signer);
      return sessionIds.map((id) => bySession.get(id)!);
    }),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
