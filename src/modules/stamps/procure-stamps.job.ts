import type { EntityManager } from '@mikro-orm/postgresql';
import { enqueue, jobIdOf } from '../../platform/jobs/enqueue';
import type { JobDefinition } from '../../platform/jobs/jobs';
import { limitTo } from '../../platform/limit';
import type { AppServices } from '../../platform/services';
import { insertStoredFiles, reserveFileSlot, StoredFile, type FileSlot } from '../files';
import { chargeOrRefund } from '../wallet';
import { ORDER_PROGRESS_JOB, announceOrderProgress } from './order-events';
import type { OrderCertificateFacts, RenderedCertificate } from './render-certificate';
import { StampInstance, StampOrder } from './stamp-order.entity';
import { StampArticle, StampState } from './stamp-reference.entity';
import { ask, backoffSeconds, stampRequestOf, vendorFor } from './vendors/ask-vendor';
import type { ProcuredStamp, StampVendor } from './vendors/vendor';

export const PROCURE_JOB = 'stamps.procure';
export const PROCURE_SWEEP_JOB = 'stamps.procure-sweep';

/** How many jobs may work on one order at once (each claims its own batch of instances). */
const PARALLEL_JOBS_PER_ORDER = 4;
/** Vendor calls in flight within one job. */
const CALLS_IN_FLIGHT = 8;

/** Queues the jobs that procure an order's pending instances, in `em`'s transaction (null: at once). */
export async function enqueueProcurement(
  services: AppServices,
  em: EntityManager | null,
  orderId: string,
  pendingCount: number,
): Promise<void> {
  const jobs = Math.min(PARALLEL_JOBS_PER_ORDER, Math.ceil(pendingCount / services.config.stamps.procureBatch));
  await enqueue(
    services.boss,
    em,
    Array.from({ length: jobs }, () => ({ name: PROCURE_JOB, data: { order_id: orderId } })),
  );
}

/**
 * A job of the order that starts at `second` (epoch seconds). A lease schedules its own check this way: if the
 * worker holding it died, that job claims the instances again at once, not at the next minute's sweep; when all
 * went well it finds nothing to claim. A deferred instance (a vendor's `pending`, a vendor that did not answer) is
 * asked again the same way. One job per order and second (its id is made from both), however many batches.
 */
async function scheduleCheck(services: AppServices, orderId: string, second: number): Promise<void> {
  await enqueue(services.boss, null, [
    {
      name: PROCURE_JOB,
      data: { order_id: orderId },
      startAfter: new Date(second * 1000),
      id: jobIdOf(`procure-lease:${orderId}:${second}`),
    },
  ]);
}

/**
 * Instances asked again later: leased to nobody until then (their lease becomes the time of the next ask), their
 * attempts counted, and a job of the order scheduled for that second.
 */
async function defer(services: AppServices, orderId: string, deferred: { id: string; seconds: number }[]): Promise<void> {
  if (deferred.length === 0) return;
  await services.orm.em
    .fork()
    .getConnection()
    .execute(
      `update stamp_instances si set claim_expires_at = now() + make_interval(secs => v.seconds),
              vendor_attempts = si.vendor_attempts + 1
         from jsonb_to_recordset(?::jsonb) as v(id text, seconds int)
        where si.id = v.id and si.status = 'pending'`,
      [JSON.stringify(deferred)],
    );
  const now = Math.ceil(Date.now() / 1000);
  for (const seconds of new Set(deferred.map((item) => item.seconds))) {
    await scheduleCheck(services, orderId, now + seconds + 1);
  }
}

/**
 * Takes a lease on up to one batch of the order's pending instances. Instances are created with the
 * order, never here: however often jobs run, crash or retry, an order has exactly `quantity` of them.
 */
async function claimBatch(
  services: AppServices,
  em: EntityManager,
  orderId: string,
): Promise<{ id: string; serial: number; vendor_attempts: number }[]> {
  const { procureBatch, claimSeconds } = services.config.stamps;
  return em.getConnection().execute(
    `update stamp_instances set claim_expires_at = now() + make_interval(secs => ?)
      where id in (select id from stamp_instances
                    where order_id = ? and status = 'pending' and (claim_expires_at is null or claim_expires_at < now())
                    order by serial limit ? for update skip locked)
      returning id, serial, vendor_attempts`,
    [claimSeconds, orderId, procureBatch],
  );
}

/** A stamp the vendor issued, its certificate rendered and stored, waiting to be recorded with others. */
interface Issued {
  instance: { id: string; serial: number };
  stamp: ProcuredStamp;
  slot: FileSlot;
  sizeBytes: number;
  sha256: string;
}

/**
 * Issued stamps are rendered (one worker-thread task), stored and recorded (one transaction) this many at a time,
 * and this job keeps one more chunk in flight than the service has worker threads: the threads render while the
 * event loop calls the vendor, writes files and talks to the database.
 */
const CHUNK = 50;

/** Tells subscribers and webhooks that the order moved (at most once a second; the last move always). */
const announce = (services: AppServices, order: StampOrder) =>
  announceOrderProgress(services, { id: order.id, userId: order.user.id });

/** A refusal: the instance is rejected and its duty and fee refunded, at once (one transaction), then announced. */
async function reject(services: AppServices, order: StampOrder, instance: { id: string }, reason: string): Promise<void> {
  await services.orm.em.fork().transactional(async (tx) => {
    const rejected = await tx.getConnection().execute<{ id: string }[]>(
      `update stamp_instances set status = 'rejected', rejected_reason = ?, claim_expires_at = null
          where id = ? and status = 'pending' returning id`,
      [reason.slice(0, 300), instance.id],
      'all',
      tx.getTransactionContext(),
    );
    if (rejected.length === 1 && !order.mock) {
      await chargeOrRefund(services, tx, {
        userId: order.user.id,
        kind: 'refund',
        amountPaise: order.dutyPaise + order.feePaise,
        reference: instance.id,
        description: `refund of rejected stamp ${instance.id} (order ${order.id}): ${reason}`,
      });
    }
  });
  await announce(services, order);
}

/**
 * Renders issued stamps' certificates on a worker thread and stores their bytes, each under a file slot of its own
 * per attempt: a slow worker whose lease ran out never overwrites the winner's PDF.
 */
async function renderAndStore(
  services: AppServices,
  order: StampOrder,
  facts: OrderCertificateFacts,
  items: { instance: { id: string; serial: number }; stamp: ProcuredStamp }[],
): Promise<Issued[]> {
  const rendered = await services.untrusted.run<RenderedCertificate[]>('renderCertificatesTask', {
    facts,
    stamps: items.map(({ instance, stamp }) => ({ serial: instance.serial, stamp })),
  });
  return Promise.all(
    items.map(async (item, index) => {
      const { pdf, sha256 } = rendered[index];
      const slot = reserveFileSlot(order.user.id);
      await services.blobs.putBytes(slot.storageKey, pdf, 'application/pdf');
      return { ...item, slot, sizeBytes: pdf.length, sha256 };
    }),
  );
}

/** What every certificate of the order prints (plain data: it crosses to the rendering thread). */
export function certificateFacts(
  services: AppServices,
  order: StampOrder,
  names: { state: string; article: string },
): OrderCertificateFacts {
  return {
    order: {
      id: order.id,
      userId: order.user.id,
      stateCode: order.stateCode,
      articleId: order.articleId,
      description: order.description ?? null,
      considerationPaise: order.considerationPaise,
      firstPartyName: order.firstPartyName,
      firstPartyAddress: order.firstPartyAddress ?? null,
      secondPartyName: order.secondPartyName,
      dutyPaise: order.dutyPaise,
    },
    stateName: names.state,
    articleName: names.article,
    watermark: watermarkOf(services, order),
  };
}

/** Sandbox and mock certificates say on their face that they are no legal stamp. */
function watermarkOf(services: AppServices, order: StampOrder): string | undefined {
  if (order.mock) return 'MOCK - NOT A LEGAL STAMP';
  return services.config.env === 'sandbox' ? 'SANDBOX - NOT A LEGAL STAMP' : undefined;
}

/**
 * Records issued stamps in one transaction: their file rows, and each instance `available` if it is still pending
 * (a worker whose lease ran out and lost the instance to another finds it settled: its file row goes, and its
 * bytes after the commit). The vendor answers the same key with the same stamp, so a batch lost with its worker
 * is issued again, not twice. Each recorded chunk is announced: progress moves with every 50 stamps, as the REST
 * read does, not with the batch.
 */
async function record(services: AppServices, order: StampOrder, answered: Issued[]): Promise<void> {
  if (answered.length === 0) return;
  const { issued, duplicates } = await withoutDuplicateCertificates(services, answered);
  for (const duplicate of duplicates) {
    await services.blobs.delete(duplicate.slot.storageKey);
    await reject(
      services,
      order,
      duplicate.instance,
      `vendor answered with certificate ${duplicate.stamp.certificateNumber}, already issued for another stamp`,
    );
  }
  if (issued.length === 0) return;
  const lost = await services.orm.em.fork().transactional(async (tx) => {
    await insertStoredFiles(
      tx,
      issued.map((item) => ({
        file: {
          ownerId: order.user.id,
          kind: 'pdf',
          name: `e-stamp-${item.stamp.certificateNumber}.pdf`,
          mime: 'application/pdf',
          pageCount: 1,
        },
        content: { sizeBytes: item.sizeBytes, sha256: item.sha256 },
        slot: item.slot,
      })),
    );
    const rows = issued.map((item) => ({
      id: item.instance.id,
      certificate_number: item.stamp.certificateNumber,
      verification_code: item.stamp.verificationCode,
      issued_at: item.stamp.issuedAt.toISOString(),
      pdf_file_id: item.slot.id,
    }));
    const updated = await tx.getConnection().execute<{ id: string }[]>(
      `update stamp_instances si
          set status = 'available', certificate_number = v.certificate_number, verification_code = v.verification_code,
              issued_at = v.issued_at, pdf_file_id = v.pdf_file_id, claim_expires_at = null
         from jsonb_to_recordset(?::jsonb)
           as v(id text, certificate_number text, verification_code text, issued_at timestamptz, pdf_file_id text)
        where si.id = v.id and si.status = 'pending'
       returning si.id`,
      [JSON.stringify(rows)],
      'all',
      tx.getTransactionContext(),
    );
    const won = new Set(updated.map((row) => row.id));
    const lostSlots = issued.filter((item) => !won.has(item.instance.id)).map((item) => item.slot);
    if (lostSlots.length > 0) await tx.nativeDelete(StoredFile, { id: { $in: lostSlots.map((slot) => slot.id) } });
    return lostSlots.map((slot) => slot.storageKey);
  });
  await Promise.all(lost.map((key) => services.blobs.delete(key)));
  await announce(services, order);
}

/**
 * A certificate number belongs to one stamp. A vendor that answers two keys with the same number (its mistake) gets
 * the later ones refused, and refunded, rather than two stamps sharing one certificate. A unique index backs this.
 */
async function withoutDuplicateCertificates(
  services: AppServices,
  answered: Issued[],
): Promise<{ issued: Issued[]; duplicates: Issued[] }> {
  const taken = await services.orm.em
    .fork()
    .getConnection()
    .execute<{ certificate_number: string; id: string }[]>(
      `select certificate_number, id from stamp_instances
        where certificate_number in (select jsonb_array_elements_text(?::jsonb))`,
      [JSON.stringify(answered.map((item) => item.stamp.certificateNumber))],
    );
  const holder = new Map(taken.map((row) => [row.certificate_number, row.id]));
  const issued: Issued[] = [];
  const duplicates: Issued[] = [];
  for (const item of answered) {
    const number = item.stamp.certificateNumber;
    const owner = holder.get(number);
    if (owner !== undefined && owner !== item.instance.id) duplicates.push(item);
    else {
      holder.set(number, item.instance.id);
      issued.push(item);
    }
  }
  return { issued, duplicates };
}

/**
 * Procures one claimed batch of an order, then queues the next one if any instance is still waiting. `vendorOverride`:
 * a vendor other than the order's (tests drive the simulated vendor's branches with it).
 */
export async function procureBatch(services: AppServices, orderId: string, vendorOverride?: StampVendor): Promise<number> {
  const em = services.orm.em.fork();
  const order = await em.findOne(StampOrder, { id: orderId });
  if (!order) return 0;
  const [state, article] = await Promise.all([
    em.findOneOrFail(StampState, { code: order.stateCode }),
    em.findOneOrFail(StampArticle, { id: order.articleId }),
  ]);
  const claimed = await claimBatch(services, em, orderId);
  if (claimed.length === 0) return 0;
  await scheduleCheck(services, orderId, Math.ceil(Date.now() / 1000) + services.config.stamps.claimSeconds + 1);
  const vendor = vendorOverride ?? vendorFor(services, order);
  const facts = certificateFacts(services, order, { state: state.name, article: article.name });
  const inFlight = limitTo(services.config.workers.threads + 1);
  const chunks: Promise<void>[] = [];
  let chunk: { instance: { id: string; serial: number }; stamp: ProcuredStamp }[] = [];
  const flush = () => {
    if (chunk.length === 0) return;
    const items = chunk;
    chunk = [];
    const done = inFlight(async () => record(services, order, await renderAndStore(services, order, facts, items)));
    // Awaited below; handled now, so that a chunk failing while vendor calls go on is not an unhandled rejection.
    done.catch(() => undefined);
    chunks.push(done);
  };
  const deferred: { id: string; seconds: number }[] = [];
  let next = 0;
  const lanes = Array.from({ length: Math.min(CALLS_IN_FLIGHT, claimed.length) }, async () => {
    while (next < claimed.length) {
      const instance = claimed[next++];
      const answer = await ask(services, vendor, stampRequestOf(order, instance.serial));
      if (answer.kind === 'issued') {
        chunk.push({ instance, stamp: answer.stamp });
        if (chunk.length >= CHUNK) flush();
      } else if (answer.kind === 'rejected') {
        await reject(services, order, instance, answer.reason);
      } else if (answer.kind === 'pending') {
        deferred.push({ id: instance.id, seconds: Math.min(3600, Math.max(1, Math.ceil(answer.retryAfterSeconds))) });
      } else {
        services.log.warn(
          { order_id: order.id, stamp_id: instance.id, vendor: vendor.name, problem: answer.problem },
          'stamp vendor did not answer; asking again later',
        );
        deferred.push({ id: instance.id, seconds: backoffSeconds(instance.vendor_attempts) });
      }
    }
  });
  await Promise.all(lanes);
  flush();
  const settled = await Promise.allSettled(chunks);
  await defer(services, order.id, deferred);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;

  const waiting = await em.count(StampInstance, {
    order: orderId,
    status: 'pending',
    $or: [{ claimExpiresAt: null }, { claimExpiresAt: { $lt: new Date() } }],
  });
  if (waiting > 0) await enqueue(services.boss, null, [{ name: PROCURE_JOB, data: { order_id: orderId } }]);
  return claimed.length;
}

export const stampJobs: JobDefinition<any>[] = [
  {
    name: PROCURE_JOB,
    // Three batches at once per worker process: the others render and write while one waits on the database.
    concurrency: 3,
    queue: { retryLimit: 10, retryDelay: 5, retryBackoff: true },
    handle: async (services, data: { order_id: string }) => {
      await procureBatch(services, data.order_id);
    },
  },
  {
    // Progress held back by the interval (order-events.ts), announced at its end.
    name: ORDER_PROGRESS_JOB,
    concurrency: 2,
    queue: { retryLimit: 5, retryDelay: 1 },
    handle: async (services, data: { order_id: string; user_id: string }) => {
      await announceOrderProgress(services, { id: data.order_id, userId: data.user_id });
    },
  },
  {
    // Picks up orders whose jobs were lost or whose worker died: their leases have run out.
    name: PROCURE_SWEEP_JOB,
    cron: '* * * * *',
    queue: { policy: 'singleton', retryLimit: 0 },
    handle: async (services) => {
      const orders = await services.orm.em
        .fork()
        .getConnection()
        .execute<{ order_id: string; pending: string }[]>(
          `select order_id, count(*) as pending from stamp_instances
            where status = 'pending' and (claim_expires_at is null or claim_expires_at < now())
              and created_at < now() - interval '30 seconds'
            group by order_id limit 200`,
        );
      for (const row of orders) {
        await enqueueProcurement(services, null, row.order_id, Number(row.pending)).catch((error: unknown) =>
          services.log.warn({ err: error, order_id: row.order_id }, 'procurement not queued; the next sweep retries'),
        );
      }
    },
  },
];
