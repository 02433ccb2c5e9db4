import type { EntityManager } from '@mikro-orm/postgresql';
import type PgBoss from 'pg-boss';
import { SecretBox } from '../../platform/crypto/secret-box';
import { newId } from '../../platform/ids';
import { enqueue, jobIdOf } from '../../platform/jobs/enqueue';
import type { JobDefinition } from '../../platform/jobs/jobs';
import type { AppServices } from '../../platform/services';
import { queueNotifications } from '../notifications';
import { User } from '../users';
import type { TargetPolicy } from '../../platform/net/public-targets';
import { postWebhook, signatureHeader, type PostOutcome } from './post-webhook';

export const DELIVER_JOB = 'webhooks.deliver';
export const SWEEP_JOB = 'webhooks.sweep';
export const SECRET_PURPOSE = 'webhook-signing-secret';

/** Deliveries one job attempts before it hands the rest of its resource's queue to a fresh job. */
const DELIVERIES_PER_JOB = 50;

/** Public addresses only, or loopback too with WEBHOOK_ALLOW_PRIVATE (local development): never private networks. */
export function targetPolicy(services: AppServices): TargetPolicy {
  return services.config.webhooks.allowLoopbackTargets ? 'public-or-loopback' : 'public';
}

interface GroupJob {
  endpoint_id: string;
  resource_id: string;
}

/**
 * A job that delivers what is due for one resource at one endpoint. With `at`, it starts then, and its id is made
 * from the group and the time, so scheduling the same wake-up twice queues it once.
 */
export function deliveryJob(endpointId: string, resourceId: string, at?: Date): PgBoss.JobInsert<GroupJob> {
  const data = { endpoint_id: endpointId, resource_id: resourceId };
  if (!at) return { name: DELIVER_JOB, data };
  return { name: DELIVER_JOB, data, startAfter: at, id: jobIdOf(`${endpointId}:${resourceId}:${at.getTime()}`) };
}

export const LEASE_CHECK_JOB = 'webhooks.lease-check';

/** The last second this process scheduled a lease check for: the jobs of one second are one job anyway. */
let leaseCheckScheduled = 0;

async function scheduleLeaseCheck(services: AppServices, leasedUntil: Date): Promise<void> {
  const second = Math.ceil(leasedUntil.getTime() / 1000);
  if (second === leaseCheckScheduled) return;
  leaseCheckScheduled = second;
  const startAfter = new Date((second + 1) * 1000);
  await enqueue(services.boss, null, [{ name: LEASE_CHECK_JOB, data: {}, startAfter, id: jobIdOf(`lease-check:${second}`) }]);
}

interface Claimed {
  deliveryId: string;
  eventId: string;
  attempt: number;
  windowStartedAt: Date;
  url: string;
  userId: string;
  /** The endpoint's secrets valid now: two during a rotation. */
  secrets: string[];
}

type Claim = { kind: 'none' } | ({ kind: 'claimed' } & Claimed);

/**
 * Delivers a resource's pending events to one endpoint, oldest first, one at a time: the head of the queue is
 * leased while it is attempted, so two workers never send it at once, and a worker killed mid-attempt leaves a
 * lease that runs out (the lease's check sends it again: at least once, with the same event id). A
 * failed attempt schedules the retry and stops the queue behind it, so events of one resource arrive in order.
 * Answers the outcome of the last attempt made, if any.
 */
export async function deliverQueue(services: AppServices, endpointId: string, resourceId: string): Promise<PostOutcome | null> {
  let last: PostOutcome | null = null;
  for (let sent = 0; sent < DELIVERIES_PER_JOB; sent++) {
    const claim = await claimHead(services, endpointId, resourceId);
    // Nothing due, or the head is another worker's: that worker goes on with the queue after it (it reads the next
    // head after recording its attempt, so it sees any event committed before then), a retry has its own job, and a
    // lease that runs out has its check.
    if (claim.kind !== 'claimed') return last;
    last = await attempt(services, claim);
    const goOn = await recordOutcome(services, endpointId, resourceId, claim, last);
    if (!goOn) return last;
  }
  await enqueue(services.boss, null, [deliveryJob(endpointId, resourceId)]);
  return last;
}

async function claimHead(services: AppServices, endpointId: string, resourceId: string): Promise<Claim> {
  const leaseSeconds = services.config.webhooks.timeoutMs / 1000 + 5;
  const connection = services.orm.em.fork().getConnection();
  // One statement: the head of the queue, locked, leased if it is due, unleased and its endpoint enabled (a
  // disabled endpoint's queue was failed when it was disabled), with what the attempt needs.
  const [claimed] = await connection.execute<
    {
      id: string;
      event_id: string;
      attempts: number;
      window_started_at: Date;
      leased_until: Date;
      url: string;
      user_id: string;
      secret_sealed: string;
      previous_secret_sealed: string | null;
      previous_secret_expires_at: Date | null;
    }[]
  >(
    `with head as (
       select id from webhook_deliveries
        where endpoint_id = ? and resource_id = ? and status = 'pending'
        order by seq limit 1
        for update
     )
     update webhook_deliveries d
        set leased_until = now() + make_interval(secs => ?), attempts = d.attempts + 1,
            window_started_at = coalesce(d.window_started_at, now())
       from head, webhook_endpoints e
      where d.id = head.id and e.id = d.endpoint_id and e.enabled
        and d.next_attempt_at <= now() and (d.leased_until is null or d.leased_until <= now())
      returning d.id, d.event_id, d.attempts, d.window_started_at, d.leased_until, e.url, e.user_id, e.secret_sealed,
                e.previous_secret_sealed, e.previous_secret_expires_at`,
    [endpointId, resourceId, leaseSeconds],
  );
  if (!claimed) return { kind: 'none' };
  // The lease schedules its own check: if this worker dies mid-attempt, the delivery is tried again as soon as
  // the lease runs out, not at the next minute's sweep. One check per second of lease ends serves every lease
  // ending in that second (its id is made from the second), so a burst of deliveries adds a job a second at most.
  await scheduleLeaseCheck(services, new Date(claimed.leased_until));
  const box = new SecretBox(services.config.secretsEncryptionKey, SECRET_PURPOSE);
  const rotating = claimed.previous_secret_sealed && new Date(claimed.previous_secret_expires_at ?? 0) > new Date();
  return {
    kind: 'claimed',
    deliveryId: claimed.id,
    eventId: claimed.event_id,
    attempt: claimed.attempts,
    windowStartedAt: new Date(claimed.window_started_at),
    url: claimed.url,
    userId: claimed.user_id,
    secrets: [box.openText(claimed.secret_sealed), ...(rotating ? [box.openText(claimed.previous_secret_sealed!)] : [])],
  };
}

async function attempt(services: AppServices, claim: Claimed): Promise<PostOutcome> {
  const { type, body } = await eventBody(services, services.orm.em.fork(), claim.eventId, claim.userId);
  return postWebhook(
    claim.url,
    {
      'content-type': 'application/json',
      'user-agent': 'Esign-Webhooks/1.0',
      'esign-event-id': claim.eventId,
      'esign-event-type': type,
      'esign-delivery-id': claim.deliveryId,
      'esign-delivery-attempt': String(claim.attempt),
      'esign-signature': signatureHeader(claim.secrets, Math.floor(Date.now() / 1000), body),
    },
    body,
    { timeoutMs: services.config.webhooks.timeoutMs, targets: targetPolicy(services) },
  );
}

function bodyOf(
  event: { id: string; type: string; created_at: Date; attributes: Record<string, unknown> | null },
  data: unknown,
): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: new Date(event.created_at).toISOString(),
    ...event.attributes,
    data,
  });
}

/**
 * The exact JSON every delivery of an event sends, made the first time it is sent: `data` is read then (the
 * resource as its REST read shows it to the owner) unless the event carries it. Every later attempt, retry or
 * redelivery sends the same bytes.
 */
async function eventBody(
  services: AppServices,
  em: EntityManager,
  eventId: string,
  userId: string,
): Promise<{ type: string; body: string }> {
  const connection = em.getConnection();
  const [event] = await connection.execute<
    {
      id: string;
      type: string;
      created_at: Date;
      read: { operation: `Query.${string}`; variables: Record<string, unknown> } | null;
      data: unknown;
      attributes: Record<string, unknown> | null;
      body: string | null;
    }[]
  >('select id, type, created_at, read, data, attributes, body from webhook_events where id = ?', [eventId]);
  if (event.body !== null) return { type: event.type, body: event.body };
  // Data given with the event is stored: the same bytes come from it every time, nothing to keep.
  if (!event.read) return { type: event.type, body: bodyOf(event, event.data) };
  const data = await services.restReads.read(event.read.operation, event.read.variables, { userId, tokenId: 'webhooks' });
  const body = bodyOf(event, data);
  // Two workers may make it at once (a lease that ran out): the first one written is the one sent.
  const [kept] = await connection.execute<{ body: string }[]>(
    `update webhook_events set body = coalesce(body, ?) where id = ? returning body`,
    [body, eventId],
  );
  return { type: event.type, body: kept.body };
}

/** Writes the attempt and what follows from it; answers whether the queue goes on to its next event. */
async function recordOutcome(
  services: AppServices,
  endpointId: string,
  resourceId: string,
  claim: Claimed,
  outcome: PostOutcome,
): Promise<boolean> {
  const { retrySchedule, retryWindowSeconds } = services.config.webhooks;
  const attemptRow = [
    newId('wha'),
    claim.deliveryId,
    outcome.durationMs / 1000,
    outcome.statusCode,
    outcome.durationMs,
    outcome.excerpt,
    outcome.error,
  ];
  const insertAttempt = `insert into webhook_attempts (id, delivery_id, attempted_at, status_code, duration_ms, response_excerpt, error)
       values (?, ?, now() - make_interval(secs => ?), ?, ?, ?, ?)`;
  if (outcome.ok) {
    // A success is one statement: the attempt, the delivery done, the endpoint answering again.
    await services.orm.em
      .fork()
      .getConnection()
      .execute(
        `with attempt as (${insertAttempt}),
              delivery as (
                update webhook_deliveries set status = 'succeeded', delivered_at = now(), leased_until = null,
                       last_attempt_at = now(), last_status_code = ?, last_error = null where id = ?)
         update webhook_endpoints set failing_since = null where id = ? and failing_since is not null`,
        [...attemptRow, outcome.statusCode, claim.deliveryId, endpointId],
      );
    return true;
  }
  return services.orm.em.fork().transactional(async (em) => {
    const connection = em.getConnection();
    const tx = em.getTransactionContext();
    const run = (sql: string, values: unknown[]) => connection.execute(sql, values, 'all', tx);
    await run(insertAttempt, attemptRow);
    const common = [outcome.statusCode, outcome.error, claim.deliveryId];
    // The schedule restarts with each window (a redelivery opens a new one). Exponential, with jitter (0.8 to 1.2 of
    // the step) so that receivers coming back are not all hit at once.
    const [inWindow] = await connection.execute<{ n: number }[]>(
      'select count(*)::int as n from webhook_attempts where delivery_id = ? and attempted_at >= ?',
      [claim.deliveryId, new Date(claim.windowStartedAt.getTime() - 1000)],
      'all',
      tx,
    );
    const step = retrySchedule[Math.min(Math.max(inWindow.n, 1) - 1, retrySchedule.length - 1)]!;
    const delayMs = step * 1000 * (0.8 + Math.random() * 0.4);
    const next = new Date(Date.now() + delayMs);
    const givesUp = next.getTime() > claim.windowStartedAt.getTime() + retryWindowSeconds * 1000;
    await run(
      `update webhook_deliveries set status = ?, next_attempt_at = ?, leased_until = null, last_attempt_at = now(),
              last_status_code = ?, last_error = ? where id = ?`,
      [givesUp ? 'failed' : 'pending', next, ...common],
    );
    // Failing since this attempt was claimed (for a first attempt, when its delivery's window began), unless it was
    // failing before.
    const [endpoint] = await connection.execute<{ failing_since: Date; enabled: boolean }[]>(
      `update webhook_endpoints set failing_since = coalesce(failing_since, ?) where id = ?
       returning failing_since, enabled`,
      [claim.attempt === 1 ? claim.windowStartedAt : new Date(Date.now() - outcome.durationMs), endpointId],
      'all',
      tx,
    );
    // Failing for the whole window: by the clock, or as this delivery, given up on, saw it fail from its first attempt.
    const failingSince = new Date(endpoint.failing_since).getTime();
    const failedThroughout =
      failingSince <= Date.now() - retryWindowSeconds * 1000 || (givesUp && failingSince <= claim.windowStartedAt.getTime());
    if (endpoint.enabled && failedThroughout) {
      await disableEndpoint(services, em, endpointId, claim.userId, new Date(endpoint.failing_since));
      return false;
    }
    if (!givesUp) await enqueue(services.boss, em, [deliveryJob(endpointId, resourceId, next)]);
    // A delivery given up on no longer holds back the events after it.
    return givesUp;
  });
}

/** Failing for the whole retry window: disabled, its queue failed (redeliverable), its owner told. */
async function disableEndpoint(
  services: AppServices,
  em: EntityManager,
  endpointId: string,
  userId: string,
  failingSince: Date,
): Promise<void> {
  const connection = em.getConnection();
  const tx = em.getTransactionContext();
  const reason = `every delivery failed since ${failingSince.toISOString()}`;
  const [endpoint] = await connection.execute<{ url: string }[]>(
    `update webhook_endpoints set enabled = false, disabled_at = now(), disabled_reason = ? where id = ? returning url`,
    [reason, endpointId],
    'all',
    tx,
  );
  await connection.execute(
    `update webhook_deliveries set status = 'failed', leased_until = null, last_error = coalesce(last_error, 'the endpoint was disabled')
      where endpoint_id = ? and status = 'pending'`,
    [endpointId],
    'all',
    tx,
  );
  const user = await em.findOneOrFail(User, { id: userId });
  const text = [
    `Your webhook endpoint ${endpoint.url} (${endpointId}) has been disabled: ${reason}.`,
    'Events are no longer sent to it. Fix the receiver, enable the endpoint again (webhooks/update, enabled: true)',
    'and send what it missed with webhooks/redeliver.',
  ].join('\n');
  await queueNotifications(services, em, [
    {
      user,
      kind: 'webhook_disabled',
      channel: 'email',
      recipient: user.email,
      subject: 'Webhook endpoint disabled',
      textBody: text,
    },
  ]);
}

/**
 * Queues a job for each resource whose next delivery is due and not leased: every minute for all (a wake-up that
 * was lost), and right after leases end for those whose lease ran out (their worker died mid-attempt).
 */
async function sweep(services: AppServices, scope: { expiredLeasesOnly: boolean }): Promise<void> {
  const due = await services.orm.em
    .fork()
    .getConnection()
    .execute<{ endpoint_id: string; resource_id: string }[]>(
      `select distinct endpoint_id, resource_id from webhook_deliveries
      where status = 'pending' and next_attempt_at <= now()
        and ${scope.expiredLeasesOnly ? 'leased_until < now()' : '(leased_until is null or leased_until < now())'}
      limit 1000`,
    );
  await enqueue(
    services.boss,
    null,
    due.map((group) => deliveryJob(group.endpoint_id, group.resource_id)),
  );
}

export const webhookJobs: JobDefinition<any>[] = [
  {
    name: DELIVER_JOB,
    // Deliveries mostly wait on receivers: one slow receiver must not hold the others.
    concurrency: 8,
    async handle(services, data: GroupJob) {
      // A queue is drained by whichever job gets to it first: the jobs of the events it carried find nothing due.
      await deliverQueue(services, data.endpoint_id, data.resource_id);
    },
  },
  { name: SWEEP_JOB, cron: '* * * * *', handle: (services) => sweep(services, { expiredLeasesOnly: false }) },
  { name: LEASE_CHECK_JOB, handle: (services) => sweep(services, { expiredLeasesOnly: true }) },
];
