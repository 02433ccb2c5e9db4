import type { JobDefinition } from '../../platform/jobs/jobs';
import { deliverNotification } from './deliver-notification';
import { Notification } from './notification.entity';
import { DELIVER_JOB, dispatchNotifications, SWEEP_JOB, type DeliverJobData } from './queue-notifications';

/** A row still queued this long after it was written may have lost its job: the sweep sends it again. */
const LOST_AFTER_MS = 60_000;
/** One-time codes this old are useless even if they were never sent: failed, not resent. */
const CODE_USELESS_AFTER_MS = 30 * 60_000;
const SWEEP_BATCH = 500;

export const notificationJobs: JobDefinition<any>[] = [
  {
    // Sent in the transaction that queued the row; retry limit and delay come with each job (config).
    name: DELIVER_JOB,
    queue: { retryLimit: 5, retryDelay: 30, retryBackoff: true },
    handle: (services, data: DeliverJobData) => deliverNotification(services, data),
  },
  {
    // The safety net for a job that is gone (a lost queue, a job archived while its row stayed queued).
    // Re-sending is harmless: the job id is derived from the row, so a job that exists is left alone.
    name: SWEEP_JOB,
    cron: '* * * * *',
    queue: { policy: 'singleton', retryLimit: 0 },
    async handle(services) {
      const em = services.orm.em.fork();
      const now = Date.now();
      await em.nativeUpdate(
        Notification,
        {
          status: 'queued',
          kind: { $in: ['email_otp', 'mobile_otp'] },
          createdAt: { $lt: new Date(now - CODE_USELESS_AFTER_MS) },
        },
        { status: 'failed', lastError: 'the code was not delivered in time' },
      );
      let after = '';
      for (;;) {
        const rows = await em.find(
          Notification,
          { status: 'queued', createdAt: { $lt: new Date(now - LOST_AFTER_MS) }, id: { $gt: after } },
          { fields: ['id'], orderBy: { id: 'asc' }, limit: SWEEP_BATCH },
        );
        await dispatchNotifications(
          services,
          rows.map((row) => row.id),
        );
        if (rows.length < SWEEP_BATCH) return;
        after = rows[rows.length - 1].id;
      }
    },
  },
];
