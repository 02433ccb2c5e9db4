import type { EntityManager } from '@mikro-orm/postgresql';
import { enqueue, jobIdOf } from '../../platform/jobs/enqueue';
import type { AppServices } from '../../platform/services';
import { recordWebhookEvent } from '../webhooks';

export const orderTopic = (clientId: string) => `stamp-order:${clientId}`;

/** Announces that an order's instances moved; subscribers read the order fresh. Delivered on commit. */
export function publishOrderChange(
  services: AppServices,
  em: EntityManager,
  order: { id: string; userId: string },
): Promise<void> {
  return services.events.publish(em, orderTopic(order.id), { client_id: order.id, user_id: order.userId });
}

/**
 * Procurement progress reaches subscribers and webhooks at most once in this many seconds per order; the completed
 * order at once (docs/webhooks.md).
 */
export const PROGRESS_INTERVAL_SECONDS = 1;

/** The job that announces progress held back by the interval, at its end. */
export const ORDER_PROGRESS_JOB = 'stamps.order-progress';

const orderRead = (orderId: string) => ({ operation: 'Query.stampOrder' as const, variables: { client_id: orderId } });

/** `stamp.order.created`, in the transaction that creates the order; data: the order as stamps/order-status shows it. */
export function recordOrderCreated(services: AppServices, tx: EntityManager, order: { id: string; userId: string }) {
  return recordWebhookEvent(services, tx, {
    userId: order.userId,
    type: 'stamp.order.created',
    resourceId: order.id,
    read: orderRead(order.id),
  });
}

/**
 * Called after each commit in which procurement settled stamps of the order (a chunk recorded, a refusal), by any
 * job in any process. The order row is locked while it decides:
 * - no instance pending any more: a subscription event and `stamp.order.completed`, at once (exactly once: an
 *   order completes once);
 * - else, nothing announced within the interval: a subscription event and `stamp.order.progress`, now;
 * - else: a job announces at the interval's end (one job per order and second), so the last change is always heard.
 * Subscribers and webhook deliveries read the order when they are sent, so an announcement shows every change
 * committed before it.
 */
export async function announceOrderProgress(services: AppServices, order: { id: string; userId: string }): Promise<void> {
  const laterAt = await services.orm.em.fork().transactional(async (tx) => {
    const connection = tx.getConnection();
    const context = tx.getTransactionContext();
    await connection.execute('select 1 from stamp_orders where id = ? for update', [order.id], 'all', context);
    // clock_timestamp(), read once the lock is held: the time the events written below are stamped with.
    const [row] = await connection.execute<{ pending: string; completed: string; due: boolean; next_at: string | null }[]>(
      `select (select count(*) from stamp_instances where order_id = o.id and status = 'pending') as pending,
              (select count(*) from webhook_events where resource_id = o.id and type = 'stamp.order.completed') as completed,
              (o.progress_announced_at is null
                or o.progress_announced_at <= clock_timestamp() - make_interval(secs => ?)) as due,
              extract(epoch from o.progress_announced_at + make_interval(secs => ?)) as next_at
         from stamp_orders o where o.id = ?`,
      [PROGRESS_INTERVAL_SECONDS, PROGRESS_INTERVAL_SECONDS, order.id],
      'all',
      context,
    );
    if (!row || Number(row.completed) > 0) return null;
    const done = Number(row.pending) === 0;
    if (!done && !row.due) return Number(row.next_at);
    await publishOrderChange(services, tx, order);
    const eventId = await recordWebhookEvent(services, tx, {
      userId: order.userId,
      type: done ? 'stamp.order.completed' : 'stamp.order.progress',
      resourceId: order.id,
      read: orderRead(order.id),
    });
    // The event's own time, so that the interval holds between the events' created_at, as receivers see them.
    await connection.execute(
      `update stamp_orders set progress_announced_at = coalesce((select created_at from webhook_events where id = ?), clock_timestamp())
        where id = ?`,
      [eventId, order.id],
      'all',
      context,
    );
    return null;
  });
  if (laterAt === null) return;
  const second = Math.ceil(laterAt);
  await enqueue(services.boss, null, [
    {
      name: ORDER_PROGRESS_JOB,
      data: { order_id: order.id, user_id: order.userId },
      startAfter: new Date(second * 1000),
      id: jobIdOf(`order-progress:${order.id}:${second}`),
    },
  ]);
}
