import { randomBytes } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { ownedOrNotFound } from '../../platform/auth/ownership';
import { SecretBox } from '../../platform/crypto/secret-box';
import { AppError, type FieldProblem } from '../../platform/errors';
import { checkPage, pageOf } from '../../platform/graphql/paging';
import { newId } from '../../platform/ids';
import { enqueue } from '../../platform/jobs/enqueue';
import { assertPublicTarget, BlockedTarget } from '../../platform/net/public-targets';
import type { AppServices } from '../../platform/services';
import { User } from '../users';
import { deliverQueue, deliveryJob, SECRET_PURPOSE, targetPolicy } from './deliver-webhooks';
import { insertDeliveries } from './record-event';
import { PING_EVENT, WEBHOOK_EVENT_TYPES } from './webhook-events';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent } from './webhook.entities';

export const LIMITS = {
  endpointsPerUser: 20,
  urlLength: 2048,
  descriptionLength: 500,
  /** How long the previous secret stays valid after a rotation. */
  previousSecretHours: 24,
  /** Deliveries one redeliver call may queue. */
  redeliverMax: 1000,
} as const;

export interface EndpointInput {
  url?: string | null;
  events?: string[] | null;
  description?: string | null;
  enabled?: boolean | null;
}

/** A new secret, shown once: `whsec_` and 32 random bytes. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

function box(services: AppServices): SecretBox {
  return new SecretBox(services.config.secretsEncryptionKey, SECRET_PURPOSE);
}

/**
 * The target rules, checked when an endpoint is saved (and again at each delivery, where the connection is made):
 * https in production (sandbox also takes http, for local development), no credentials in the URL, and a host
 * that resolves to public addresses only (or loopback, with WEBHOOK_ALLOW_PRIVATE=true; never private networks,
 * link-local or metadata addresses, however the URL spells them).
 */
async function checkTarget(services: AppServices, url: string): Promise<void> {
  const refuse = (problem: string) => {
    throw new AppError('webhook_target_refused', { errors: [{ field: 'url', problem }] });
  };
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw AppError.badRequest([{ field: 'url', problem: 'must be an absolute http(s) URL' }]);
  }
  const schemes = services.config.env === 'production' ? ['https:'] : ['https:', 'http:'];
  if (!schemes.includes(target.protocol))
    refuse(services.config.env === 'production' ? 'must be https in production' : 'must be http or https');
  if (target.username || target.password) refuse('must not carry credentials');
  try {
    await assertPublicTarget(target, targetPolicy(services));
  } catch (error) {
    if (error instanceof BlockedTarget) refuse(error.message);
    refuse(`its host does not resolve: ${(error as Error).message}`);
  }
}

function checkInput(input: EndpointInput, creating: boolean): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (creating && !input.url) problems.push({ field: 'url', problem: 'required' });
  if (input.url != null && input.url.length > LIMITS.urlLength)
    problems.push({ field: 'url', problem: `at most ${LIMITS.urlLength} characters` });
  if (creating && !input.events) problems.push({ field: 'events', problem: 'required: event types, or ["*"] for all' });
  if (input.events != null) {
    if (input.events.length === 0) problems.push({ field: 'events', problem: 'at least one event type, or "*"' });
    const unknown = input.events.filter((type) => type !== '*' && !(type in WEBHOOK_EVENT_TYPES));
    if (unknown.length > 0)
      problems.push({
        field: 'events',
        problem: `unknown event types: ${unknown.slice(0, 5).join(', ')} (see docs/webhooks.md)`,
      });
  }
  if (input.description != null && input.description.length > LIMITS.descriptionLength)
    problems.push({ field: 'description', problem: `at most ${LIMITS.descriptionLength} characters` });
  return problems;
}

/** `['*']` alone when it is given, else the types once each, in the order of the list of events. */
function normalEvents(events: string[]): string[] {
  if (events.includes('*')) return ['*'];
  return Object.keys(WEBHOOK_EVENT_TYPES).filter((type) => events.includes(type));
}

export async function createEndpoint(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  input: EndpointInput,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const problems = checkInput(input, true);
  if (problems.length > 0) throw AppError.badRequest(problems);
  await checkTarget(services, input.url!);
  const secret = newSecret();
  const endpoint = await em.transactional(async (tx) => {
    // One at a time per user, so the limit holds against racing creates.
    await tx
      .getConnection()
      .execute('select 1 from users where id = ? for update', [actor.userId], 'all', tx.getTransactionContext());
    const count = await tx.count(WebhookEndpoint, { user: actor.userId });
    if (count >= LIMITS.endpointsPerUser)
      throw new AppError('conflict', {
        errors: [{ field: 'url', problem: `at most ${LIMITS.endpointsPerUser} endpoints per user` }],
      });
    const created = tx.create(WebhookEndpoint, {
      user: tx.getReference(User, actor.userId),
      url: input.url!,
      description: input.description ?? undefined,
      events: normalEvents(input.events!),
      secretSealed: box(services).seal(secret),
    });
    await tx.flush();
    return created;
  });
  return { endpoint, secret };
}

export async function getOwnEndpoint(em: EntityManager, actor: Actor, endpointId: string): Promise<WebhookEndpoint> {
  return ownedOrNotFound(actor, await em.findOne(WebhookEndpoint, { id: endpointId }));
}

export async function listOwnEndpoints(em: EntityManager, actor: Actor, args: { page: number; size: number }) {
  const { offset, limit } = checkPage(args);
  const rows = await em.find(
    WebhookEndpoint,
    { user: actor.userId },
    { orderBy: { createdAt: 'desc', seq: 'desc' }, offset, limit: limit + 1 },
  );
  return pageOf(rows, limit);
}

export async function updateEndpoint(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  endpointId: string,
  input: EndpointInput,
): Promise<WebhookEndpoint> {
  const problems = checkInput(input, false);
  if (problems.length > 0) throw AppError.badRequest(problems);
  if (input.url != null) await checkTarget(services, input.url);
  return em.transactional(async (tx) => {
    const endpoint = ownedOrNotFound(
      actor,
      await tx.findOne(WebhookEndpoint, { id: endpointId }, { lockMode: LockMode.PESSIMISTIC_WRITE }),
    );
    if (input.url != null) endpoint.url = input.url;
    if (input.events != null) endpoint.events = normalEvents(input.events);
    if (input.description !== undefined) endpoint.description = input.description ?? undefined;
    if (input.enabled != null && input.enabled !== endpoint.enabled) {
      endpoint.enabled = input.enabled;
      // Enabled again: it starts with a clean record; what it missed is sent by webhooks/redeliver.
      endpoint.disabledAt = input.enabled ? null : new Date();
      endpoint.disabledReason = input.enabled ? null : 'disabled by its owner';
      endpoint.failingSince = null;
      // Disabled: its queue is failed (webhooks/redeliver sends it again once it is enabled).
      if (!input.enabled)
        await tx.getConnection().execute(
          `update webhook_deliveries set status = 'failed', leased_until = null, last_error = 'the endpoint was disabled'
              where endpoint_id = ? and status = 'pending'`,
          [endpoint.id],
          'all',
          tx.getTransactionContext(),
        );
    }
    await tx.flush();
    return endpoint;
  });
}

export async function deleteEndpoint(em: EntityManager, actor: Actor, endpointId: string): Promise<string> {
  return em.transactional(async (tx) => {
    const endpoint = ownedOrNotFound(actor, await tx.findOne(WebhookEndpoint, { id: endpointId }));
    // Its deliveries and their attempts go with it (foreign keys cascade); its events stay with the user.
    await tx.nativeDelete(WebhookEndpoint, { id: endpoint.id });
    return endpoint.id;
  });
}

/** A new secret; the one before it stays valid (and is signed with) for 24 hours. */
export async function rotateSecret(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  endpointId: string,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const secret = newSecret();
  const endpoint = await em.transactional(async (tx) => {
    const endpoint = ownedOrNotFound(
      actor,
      await tx.findOne(WebhookEndpoint, { id: endpointId }, { lockMode: LockMode.PESSIMISTIC_WRITE, populate: ['secretSealed'] }),
    );
    endpoint.previousSecretSealed = endpoint.secretSealed;
    endpoint.previousSecretExpiresAt = new Date(Date.now() + LIMITS.previousSecretHours * 3_600_000);
    endpoint.secretSealed = box(services).seal(secret);
    await tx.flush();
    return endpoint;
  });
  return { endpoint, secret };
}

/**
 * Sends a `ping` to an enabled endpoint now, whatever it subscribes to, and answers the delivery after its first
 * attempt (retried like any other delivery if that failed). Each ping is a resource of its own (its event's id):
 * it waits behind nothing, not an earlier ping still being retried, and holds back no real event.
 */
export async function sendTestEvent(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  endpointId: string,
): Promise<WebhookDelivery> {
  const endpoint = await getOwnEndpoint(em, actor, endpointId);
  if (!endpoint.enabled)
    throw new AppError('conflict', { errors: [{ field: 'endpoint_id', problem: 'the endpoint is disabled: enable it first' }] });
  const ping = await em.transactional(async (tx) => {
    const eventId = newId('evt');
    const connection = tx.getConnection();
    await connection.execute(
      `insert into webhook_events (id, user_id, type, resource_id, data) values (?, ?, ?, ?, ?)`,
      [eventId, actor.userId, PING_EVENT, eventId, JSON.stringify({ endpoint_id: endpoint.id, url: endpoint.url })],
      'all',
      tx.getTransactionContext(),
    );
    const [id] = await insertDeliveries(connection, tx.getTransactionContext(), [
      { eventId, resourceId: eventId, endpointId: endpoint.id },
    ]);
    return { id: id!, eventId };
  });
  const attempted = await deliverQueue(services, endpoint.id, ping.eventId);
  // Nothing attempted here: the minute's sweep took the delivery between its commit and this call. Its attempt is
  // under way in that job; the answer waits for it (at most the timeout and the lease).
  if (!attempted) await untilAttempted(services, ping.id);
  return em.fork().findOneOrFail(WebhookDelivery, { id: ping.id }, { populate: ['event'] });
}

async function untilAttempted(services: AppServices, deliveryId: string): Promise<void> {
  const deadline = Date.now() + services.config.webhooks.timeoutMs + 10_000;
  const connection = services.orm.em.fork().getConnection();
  while (Date.now() < deadline) {
    const [row] = await connection.execute<{ n: number }[]>(
      'select count(*)::int as n from webhook_attempts where delivery_id = ?',
      [deliveryId],
    );
    if (row.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface DeliveryFilter {
  endpoint_id?: string | null;
  event_id?: string | null;
}

/** The deliveries of one of the caller's endpoints or events, newest first, each with its attempts. */
export async function listDeliveries(
  em: EntityManager,
  actor: Actor,
  filter: DeliveryFilter,
  args: { page: number; size: number },
): Promise<{ items: WebhookDelivery[]; has_next: boolean; attempts: Map<string, WebhookAttempt[]> }> {
  const { offset, limit } = checkPage(args);
  if (!filter.endpoint_id && !filter.event_id) throw AppError.missingFields(['endpoint_id']);
  const where: Record<string, unknown> = {};
  if (filter.endpoint_id) where.endpoint = (await getOwnEndpoint(em, actor, filter.endpoint_id)).id;
  if (filter.event_id) where.event = ownedOrNotFound(actor, await em.findOne(WebhookEvent, { id: filter.event_id })).id;
  const rows = await em.find(WebhookDelivery, where, {
    orderBy: { createdAt: 'desc', seq: 'desc' },
    offset,
    limit: limit + 1,
    populate: ['event'],
  });
  const page = pageOf(rows, limit);
  const attempts = new Map<string, WebhookAttempt[]>();
  const all = await em.find(
    WebhookAttempt,
    { delivery: { $in: page.items.map((delivery) => delivery.id) } },
    { orderBy: { seq: 'asc' } },
  );
  for (const attempt of all) {
    const list = attempts.get(attempt.delivery.id) ?? [];
    list.push(attempt);
    attempts.set(attempt.delivery.id, list);
  }
  return { ...page, attempts };
}

export interface RedeliverInput {
  event_id?: string | null;
  endpoint_id?: string | null;
  /** With endpoint_id: every failed delivery of that endpoint created since then. */
  since?: Date | null;
}

/**
 * Sends one event again (to one endpoint, or to every endpoint it went to), or every failed delivery of an endpoint
 * since a time: each becomes pending with a fresh retry window, in its resource's queue at its original place.
 */
export async function redeliver(services: AppServices, em: EntityManager, actor: Actor, input: RedeliverInput): Promise<number> {
  if (!input.event_id && !(input.endpoint_id && input.since))
    throw AppError.missingFields(input.endpoint_id ? ['since'] : ['event_id']);
  return em.transactional(async (tx) => {
    const where: Record<string, unknown> = {};
    if (input.endpoint_id) {
      const endpoint = ownedOrNotFound(actor, await tx.findOne(WebhookEndpoint, { id: input.endpoint_id }));
      if (!endpoint.enabled)
        throw new AppError('conflict', {
          errors: [{ field: 'endpoint_id', problem: 'the endpoint is disabled: enable it first' }],
        });
      where.endpoint = endpoint.id;
    }
    if (input.event_id) where.event = ownedOrNotFound(actor, await tx.findOne(WebhookEvent, { id: input.event_id })).id;
    else where.status = 'failed';
    if (input.since) where.createdAt = { $gte: input.since };
    where.endpoint = where.endpoint ?? { enabled: true };
    const deliveries = await tx.find(WebhookDelivery, where, { limit: LIMITS.redeliverMax, orderBy: { seq: 'asc' } });
    const again = deliveries.filter((delivery) => delivery.status !== 'pending');
    for (const delivery of again) {
      delivery.status = 'pending';
      delivery.nextAttemptAt = new Date();
      delivery.windowStartedAt = null;
      delivery.leasedUntil = null;
    }
    await tx.flush();
    const groups = new Map(again.map((delivery) => [`${delivery.endpoint.id}:${delivery.resourceId}`, delivery]));
    await enqueue(
      services.boss,
      tx,
      [...groups.values()].map((delivery) => deliveryJob(delivery.endpoint.id, delivery.resourceId)),
    );
    return again.length;
  });
}
