import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm';
import { StoredFile } from '../../modules/files/stored-file.entity';
import { EsignSession } from '../../modules/esign/esign-session.entity';
import { readSignerRecords, type SignerRecord } from '../../modules/esign/session-rows';
import { StampInstance, StampOrder, type StampStatus } from '../../modules/stamps/stamp-order.entity';

/**
 * Per-request batch loaders: every nested read of a kind within one request costs one statement,
 * however many parents ask. Owner checks happen where the parent was loaded; children follow it.
 */
export function createLoaders(orm: Orm, entityManager: () => EntityManager) {
  return {
    fileById: new DataLoader<string, StoredFile | null>(async (ids) => {
      const files = await entityManager().find(StoredFile, { id: [...ids] });
      const byId = new Map(files.map((file) => [file.id, file]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
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
    /** Listed (non-pending) instances per order, optionally of one status; key `order_id|status`. */
    stampsByOrder: new DataLoader<string, StampInstance[]>(async (keys) => {
      const orderIds = [...new Set(keys.map((key) => key.split('|')[0]))];
      const instances = await entityManager().find(
        StampInstance,
        { order: orderIds, status: { $ne: 'pending' } },
        { orderBy: { order: 'asc', serial: 'asc' } },
      );
      return keys.map((key) => {
        const [orderId, status] = key.split('|');
        return instances.filter((instance) => instance.order.id === orderId && (!status || instance.status === status));
      });
    }),
    /** One page of an order's listed instances; key `order_id|status|offset|limit`. */
    stampPageByOrder: new DataLoader<string, StampInstance[]>((keys) =>
      loadByWindow(keys, async ([status, offset, limit], orderIds) => {
        const ranked = await entityManager()
          .getConnection()
          .execute<{ id: string }[]>(
            `select id from (select id, row_number() over (partition by order_id order by serial) as rank
               from stamp_instances where order_id in (${orderIds.map(() => '?').join(', ')})
               and status <> 'pending' ${status ? 'and status = ?' : ''}) ranked
             where rank > ? and rank <= ?`,
            [...orderIds, ...(status ? [status] : []), Number(offset), Number(offset) + Number(limit)],
          );
        const instances = ranked.length
          ? await entityManager().find(StampInstance, { id: ranked.map((row) => row.id) }, { orderBy: { serial: 'asc' } })
          : [];
        return (orderId) => instances.filter((instance) => instance.order.id === orderId);
      }),
    ),
    statusCountsByOrder: new DataLoader<string, Record<StampStatus, number>>(async (orderIds) => {
      const rows = await entityManager()
        .getConnection()
        .execute<{ order_id: string; status: StampStatus; n: number }[]>(
          `select order_id, status, count(*)::int as n from stamp_instances
            where order_id in (${orderIds.map(() => '?').join(', ')}) group by order_id, status`,
          [...orderIds],
        );
      return orderIds.map((id) => {
        const counts = { pending: 0, available: 0, reserved: 0, used: 0, rejected: 0 };
        for (const row of rows) if (row.order_id === id) counts[row.status] = row.n;
        return counts;
      });
    }),
    /** Stamps held or used by each session, in the order their pages were placed. */
    stampsBySession: new DataLoader<string, StampInstance[]>(async (sessionIds) => {
      const instances = await entityManager().find(
        StampInstance,
        { session: [...sessionIds] },
        { orderBy: { dutyPaise: 'desc', createdAt: 'asc', serial: 'asc', id: 'asc' } },
      );
      return sessionIds.map((id) => instances.filter((instance) => instance.session?.id === id));
    }),
    sessionById: new DataLoader<string, EsignSession | null>(async (ids) => {
      const sessions = await entityManager().find(EsignSession, { id: [...ids] });
      return ids.map((id) => sessions.find((session) => session.id === id) ?? null);
    }),
    orderById: new DataLoader<string, StampOrder | null>(async (ids) => {
      const orders = await entityManager().find(StampOrder, { id: [...ids] });
      return ids.map((id) => orders.find((order) => order.id === id) ?? null);
    }),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;

/**
 * For loaders keyed `parent|window...` (a page of each parent's children): the parents asking for one window are
 * read together, so a page of parents costs one read per distinct window, whatever their number. `read` gets the
 * window's parts and its parents, and answers each parent's children.
 */
async function loadByWindow<T>(
  keys: readonly string[],
  read: (window: string[], parentIds: string[]) => Promise<(parentId: string) => T[]>,
): Promise<T[][]> {
  const parentsByWindow = new Map<string, string[]>();
  for (const key of keys) {
    const [parentId, ...window] = key.split('|');
    const group = window.join('|');
    parentsByWindow.set(group, [...(parentsByWindow.get(group) ?? []), parentId]);
  }
  const byKey = new Map<string, T[]>();
  for (const [window, parentIds] of parentsByWindow) {
    const childrenOf = await read(window.split('|'), parentIds);
    for (const parentId of parentIds) byKey.set(`${parentId}|${window}`, childrenOf(parentId));
  }
  return keys.map((key) => byKey.get(key) ?? []);
}
