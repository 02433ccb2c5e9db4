import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';
import { recordWebhookEvent } from '../webhooks';

export const orderTopic = (clientId: string) => `stamp-order:${clientId}`;

/** Announces that an order's instances moved; subscribers read the counts fresh. Delivered on commit. */
export function publishOrderChange(
  services: AppServices,
  em: EntityManager,
  order: { id: string; userId: string },
): Promise<void> {
  return services.events.publish(em, orderTopic(order.id), { client_id: order.id, user_id: order.userId });
}

/** How often an order's progress is announced to webhooks at most. */
const PROGRESS_EVERY_SECONDS = 5;

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
 * After a batch of an order settled: `stamp.order.completed` once no instance is pending (exactly once: the order
 * row is locked while it is decided, and an order completes once), else `stamp.order.progress`, at most one every
 * few seconds per order.
 */
export async function recordOrderProgress(services: AppServices, em: EntityManager, order: { id: string; userId: string }) {
  await em.transactional(async (tx) => {
    const connection = tx.getConnection();
    const context = tx.getTransactionContext();
    await connection.execute('select 1 from stamp_orders where id = ? for update', [order.id], 'all', context);
    const [counts] = await connection.execute<{ pending: string; completed: string }[]>(
      `select (select count(*) from stamp_instances where order_id = ? and status = 'pending') as pending,
              (select count(*) from webhook_events where resource_id = ? and type = 'stamp.order.completed') as completed`,
      [order.id, order.id],
      'all',
      context,
    );
    if (Number(counts.completed) > 0) return;
    const done = Number(counts.pending) === 0;
    await recordWebhookEvent(services, tx, {
      userId: order.userId,
      type: done ? 'stamp.order.completed' : 'stamp.order.progress',
      resourceId: order.id,
      read: orderRead(order.id),
      ...(done ? {} : { coalesceSeconds: PROGRESS_EVERY_SECONDS }),
    });
  });
}
