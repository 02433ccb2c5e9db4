import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';

export const orderTopic = (clientId: string) => `stamp-order:${clientId}`;

/** Announces that an order's instances moved; subscribers read the counts fresh. Delivered on commit. */
export function publishOrderChange(
  services: AppServices,
  em: EntityManager,
  order: { id: string; userId: string },
): Promise<void> {
  return services.events.publish(em, orderTopic(order.id), { client_id: order.id, user_id: order.userId });
}
