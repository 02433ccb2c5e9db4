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
  const [eventId] = await recordWebhookEvents(services, em, [event]);
  return eventId ?? null;
}

/**
 * Many events in one transaction (a bulk's chunk of new sessions), as recordWebhookEvent writes each: one read of
 * each owner's endpoints, one insert of the events in order, one of their deliveries, one batch of jobs. Answers
 * each event's id, or null where no endpoint wants it.
 */
export async function recordWebhookEvents(
  services: AppServices,
  em: EntityManager,
  events: readonly NewWebhookEvent[],
): Promise<(string | null)[]> {
  if (!em.isInTransaction()) throw new Error('recordWebhookEvent joins the transaction of the change');
  const connection = em.getConnection();
  const tx = em.getTransactionContext();
  const endpointsOf = new Map<string, { id: string; events: string[] }[]>();
  for (const userId of new Set(events.map((event) => event.userId))) {
    endpointsOf.set(
      userId,
      await connection.execute('select id, events from webhook_endpoints where user_id = ? and enabled', [userId], 'all', tx),
    );
  }
  const recorded: { id: string; event: NewWebhookEvent; endpointIds: string[] }[] = [];
  for (const event of events) {
    const endpoints = endpointsOf.get(event.userId)!.filter((endpoint) => subscribes(endpoint.events, event.type));
    if (endpoints.length === 0 || (event.coalesceSeconds && (await recentlyRecorded(connection, tx, event)))) continue;
    recorded.push({ id: newId('evt'), event, endpointIds: endpoints.map((endpoint) => endpoint.id) });
  }
  if (recorded.length > 0) {
    // The rows travel as one JSON parameter, in order: `seq` keeps the order they were recorded in.
    const rows = recorded.map(({ id, event }) => ({
      id,
      user_id: event.userId,
      type: event.type,
      resource_id: event.resourceId,
      read: event.read ?? null,
      data: event.data ?? null,
      attributes: event.attributes ?? null,
    }));
    await connection.execute(
      `insert into webhook_events (id, user_id, type, resource_id, read, data, attributes)
       select row.id, row.user_id, row.type, row.resource_id, row.read, row.data, row.attributes
         from rows from (jsonb_to_recordset(?::jsonb) as (id text, user_id text, type text, resource_id text,
              read jsonb, data jsonb, attributes jsonb)) with ordinality
              as row(id, user_id, type, resource_id, read, data, attributes, position)
        order by row.position`,
      [JSON.stringify(rows)],
      'all',
      tx,
    );
    await insertDeliveries(
      connection,
      tx,
      recorded.flatMap(({ id, event, endpointIds }) =>
        endpointIds.map((endpointId) => ({ eventId: id, resourceId: event.resourceId, endpointId })),
      ),
    );
    await enqueue(
      services.boss,
      em,
      recorded.flatMap(({ event, endpointIds }) => endpointIds.map((endpointId) => deliveryJob(endpointId, event.resourceId))),
    );
  }
  const ids = new Map(recorded.map(({ id, event }) => [event, id] as const));
  return events.map((event) => ids.get(event) ?? null);
}

/** A progress event within `coalesceSeconds` of the last one of its type and resource is left out. */
async function recentlyRecorded(connection: Connection, tx: unknown, event: NewWebhookEvent): Promise<boolean> {
  const [recent] = await connection.execute<unknown[]>(
    `select 1 from webhook_events where resource_id = ? and type = ? and created_at > clock_timestamp() - make_interval(secs => ?) limit 1`,
    [event.resourceId, event.type, event.coalesceSeconds],
    'all',
    tx as never,
  );
  return recent !== undefined;
}

type Connection = ReturnType<EntityManager['getConnection']>;

/** One delivery per event and endpoint; answers their ids. */
export async function insertDeliveries(
  connection: Connection,
  tx: unknown,
  deliveries: readonly { eventId: string; resourceId: string; endpointId: string }[],
): Promise<string[]> {
  const rows = deliveries.map((delivery) => ({
    id: newId('whd'),
    event_id: delivery.eventId,
    endpoint_id: delivery.endpointId,
    resource_id: delivery.resourceId,
  }));
  // The rows travel as one JSON parameter (the query builder would spread an array into a list), in order.
  await connection.execute(
    `insert into webhook_deliveries (id, event_id, endpoint_id, resource_id)
     select row.id, row.event_id, row.endpoint_id, row.resource_id
       from rows from (jsonb_to_recordset(?::jsonb) as (id text, event_id text, endpoint_id text, resource_id text))
            with ordinality as row(id, event_id, endpoint_id, resource_id, position)
      order by row.position`,
    [JSON.stringify(rows)],
    'all',
    tx as never,
  );
  return rows.map((row) => row.id);
}
