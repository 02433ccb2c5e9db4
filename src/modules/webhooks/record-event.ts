import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../platform/ids';
import { enqueue } from '../../platform/jobs/enqueue';
import type { AppServices } from '../../platform/services';
import { deliveryJob } from './deliver-webhooks';
import { subscribes, type WebhookEventType } from './webhook-events';

export interface NewWebhookEvent {
  userId: string;
  type: WebhookEventType;
  /** The session, order or ledger entry it is about: events of one resource reach an endpoint in order. */
  resourceId: string;
  /** The REST read that shows the resource (read as the owner when the event is first sent)... */
  read?: { operation: `Query.${string}`; variables: Record<string, unknown> };
  /** ...or the data itself. */
  data?: unknown;
  /** Keys the body carries beside `data`: `signer_id` in signer events, `fields` in esign.signer.signed. */
  attributes?: Record<string, unknown>;
  /** At most one event of this type and resource in this many seconds (progress events). */
  coalesceSeconds?: number;
}

/**
 * Writes an event and one delivery per endpoint of the owner that subscribes to it, with their jobs, in `em`'s
 * transaction: a change that rolls back sends nothing, and no worker sees a job before its rows. A user without a
 * subscribed endpoint costs one indexed read. Answers the event's id, or null when no endpoint wants it.
 */
export async function recordWebhookEvent(
  services: AppServices,
  em: EntityManager,
  event: NewWebhookEvent,
): Promise<string | null> {
  if (!em.isInTransaction()) throw new Error('recordWebhookEvent joins the transaction of the change');
  const connection = em.getConnection();
  const tx = em.getTransactionContext();
  const endpoints = (
    await connection.execute<{ id: string; events: string[] }[]>(
      'select id, events from webhook_endpoints where user_id = ? and enabled',
      [event.userId],
      'all',
      tx,
    )
  ).filter((endpoint) => subscribes(endpoint.events, event.type));
  if (endpoints.length === 0) return null;
  if (event.coalesceSeconds) {
    const [recent] = await connection.execute<unknown[]>(
      `select 1 from webhook_events where resource_id = ? and type = ? and created_at > clock_timestamp() - make_interval(secs => ?) limit 1`,
      [event.resourceId, event.type, event.coalesceSeconds],
      'all',
      tx,
    );
    if (recent) return null;
  }
  const eventId = newId('evt');
  await connection.execute(
    `insert into webhook_events (id, user_id, type, resource_id, read, data, attributes) values (?, ?, ?, ?, ?, ?, ?)`,
    [
      eventId,
      event.userId,
      event.type,
      event.resourceId,
      event.read ? JSON.stringify(event.read) : null,
      event.data === undefined ? null : JSON.stringify(event.data),
      event.attributes ? JSON.stringify(event.attributes) : null,
    ],
    'all',
    tx,
  );
  await insertDeliveries(
    connection,
    tx,
    eventId,
    event.resourceId,
    endpoints.map((endpoint) => endpoint.id),
  );
  await enqueue(
    services.boss,
    em,
    endpoints.map((endpoint) => deliveryJob(endpoint.id, event.resourceId)),
  );
  return eventId;
}

export async function insertDeliveries(
  connection: ReturnType<EntityManager['getConnection']>,
  tx: unknown,
  eventId: string,
  resourceId: string,
  endpointIds: readonly string[],
): Promise<string[]> {
  const ids = endpointIds.map(() => newId('whd'));
  // The rows travel as one JSON parameter (the query builder would spread an array into a list).
  const rows = endpointIds.map((endpointId, index) => ({ id: ids[index], endpoint_id: endpointId }));
  await connection.execute(
    `insert into webhook_deliveries (id, event_id, endpoint_id, resource_id)
     select row.id, ?, row.endpoint_id, ? from jsonb_to_recordset(?::jsonb) as row(id text, endpoint_id text)`,
    [eventId, resourceId, JSON.stringify(rows)],
    'all',
    tx as never,
  );
  return ids;
}
