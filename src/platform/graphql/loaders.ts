import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { StoredFile } from '../../modules/files/stored-file.entity';
import { EsignSession } from '../../modules/esign/esign-session.entity';
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
    /** The latest 100 sessions of each template, in two statements for any number of templates. */
    sessionsByTemplate: new DataLoader<string, EsignSession[]>(async (templateIds) => {
      const ranked = await em.getConnection().execute<{ id: string }[]>(
        `select id from (select id, row_number() over (partition by template_id order by created_at desc, id desc) as rank
           from esign_sessions where template_id in (${templateIds.map(() => '?').join(', ')})) ranked where rank <= 100`,
        [...templateIds],
      );
      const sessions = ranked.length
        ? await em.find(EsignSession, { id: ranked.map((row) => row.id) }, { orderBy: { createdAt: 'desc', id: 'desc' } })
        : [];
      return templateIds.map((id) => sessions.filter((session) => session.template?.id === id));
    }),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
