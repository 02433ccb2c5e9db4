import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';
import { recordWebhookEvent, type WebhookEventType } from '../webhooks';
import { BULK_LIMITS } from './bulk-limits';

export const bulkTopic = (clientId: string) => `bulk:${clientId}`;

/** Announces that rows of a bulk were made (or it ended); subscribers read the bulk fresh. Delivered on commit. */
export function publishBulkChange(services: AppServices, em: EntityManager, bulk: { id: string; userId: string }): Promise<void> {
  return services.events.publish(em, bulkTopic(bulk.id), { client_id: bulk.id, user_id: bulk.userId });
}

/** An `esign.bulk.*` event in `em`'s transaction; its data is the bulk as GET esign/bulk-status shows it. */
export function recordBulkWebhook(
  services: AppServices,
  em: EntityManager,
  bulk: { id: string; userId: string },
  type: Extract<WebhookEventType, `esign.bulk.${string}`>,
): Promise<string | null> {
  return recordWebhookEvent(services, em, {
    userId: bulk.userId,
    type,
    resourceId: bulk.id,
    read: { operation: 'Query.bulk', variables: { client_id: bulk.id } },
  });
}

/**
 * After a chunk of rows: subscribers hear of it, and `esign.bulk.progress` goes when none went in the last
 * BULK_LIMITS.progressSeconds (one conditional update decides, whichever job of the bulk asks).
 */
export async function announceBulkProgress(
  services: AppServices,
  tx: EntityManager,
  bulk: { id: string; userId: string },
): Promise<void> {
  await publishBulkChange(services, tx, bulk);
  const due = await tx.getConnection().execute<{ id: string }[]>(
    `update bulks set progress_announced_at = clock_timestamp()
      where id = ? and (progress_announced_at is null or progress_announced_at <= clock_timestamp() - make_interval(secs => ?))
      returning id`,
    [bulk.id, BULK_LIMITS.progressSeconds],
    'all',
    tx.getTransactionContext(),
  );
  if (due.length > 0) await recordBulkWebhook(services, tx, bulk, 'esign.bulk.progress');
}
