import DataLoader from 'dataloader';
import { loadByWindow, type LoaderFactory } from '../../../platform/graphql/loaders';
import { EsignSession } from '../esign-session.entity';
import { readSignerRecords, type SignerRecord } from './session-rows';

declare module '../../../platform/graphql/loaders' {
  interface Loaders {
    signersBySession: DataLoader<string, SignerRecord[]>;
    sessionsByTemplate: DataLoader<string, EsignSession[]>;
    sessionById: DataLoader<string, EsignSession | null>;
  }
}

/**
 * Per-request batch loaders over sessions and signers: every nested read of a kind within one request costs one statement,
 * however many parents ask. Owner checks happen where the parent was loaded; children follow it.
 */
export const sessionLoaders: LoaderFactory = (entityManager, orm) => ({
  signersBySession: new DataLoader<string, SignerRecord[]>(async (sessionIds) => {
    const bySession = await readSignerRecords(orm, sessionIds);
    return sessionIds.map((id) => bySession.get(id)!);
  }),
  /** A window of each template's sessions, newest first; key `template_id|offset|limit`. */
  sessionsByTemplate: new DataLoader<string, EsignSession[]>((keys) =>
    loadByWindow(keys, async ([offset, limit], templateIds) => {
      const ranked = await entityManager()
        .getConnection()
        .execute<{ id: string }[]>(
          `select id from (select id, row_number() over (partition by template_id order by created_at desc, seq desc) as rank
           from esign_sessions where template_id in (${templateIds.map(() => '?').join(', ')})) ranked where rank > ? and rank <= ?`,
          [...templateIds, Number(offset), Number(offset) + Number(limit)],
        );
      const sessions = ranked.length
        ? await entityManager().find(
            EsignSession,
            { id: ranked.map((row) => row.id) },
            { orderBy: { createdAt: 'desc', seq: 'desc' } },
          )
        : [];
      return (templateId) => sessions.filter((session) => session.template?.id === templateId);
    }),
  ),
  sessionById: new DataLoader<string, EsignSession | null>(async (ids) => {
    const sessions = await entityManager().find(EsignSession, { id: [...ids] });
    return ids.map((id) => sessions.find((session) => session.id === id) ?? null);
  }),
});
