import DataLoader from 'dataloader';
import { loadByWindow, type LoaderFactory } from '../../platform/graphql/loaders';
import { StampInstance, StampOrder, type StampStatus } from './stamp-order.entity';

declare module '../../platform/graphql/loaders' {
  interface Loaders {
    stampsByOrder: DataLoader<string, StampInstance[]>;
    stampPageByOrder: DataLoader<string, StampInstance[]>;
    statusCountsByOrder: DataLoader<string, Record<StampStatus, number>>;
    stampsBySession: DataLoader<string, StampInstance[]>;
    orderById: DataLoader<string, StampOrder | null>;
  }
}

/**
 * Per-request batch loaders over stamp orders and instances: every nested read of a kind within one request costs one statement,
 * however many parents ask. Owner checks happen where the parent was loaded; children follow it.
 */
export const stampLoaders: LoaderFactory = (entityManager) => ({
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
  orderById: new DataLoader<string, StampOrder | null>(async (ids) => {
    const orders = await entityManager().find(StampOrder, { id: [...ids] });
    return ids.map((id) => orders.find((order) => order.id === id) ?? null);
  }),
});
