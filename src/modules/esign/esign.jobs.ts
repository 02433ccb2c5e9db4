import { enqueue } from '../../platform/jobs/enqueue';
import type { JobDefinition } from '../../platform/jobs/jobs';
import { EsignSession } from './esign-session.entity';
import { expireDueSessions } from './session/expire-sessions';
import { sendDueReminders } from './signers/send-reminders';

export const EXPIRE_SESSION_JOB = 'esign.expire';
export const EXPIRE_SWEEP_JOB = 'esign.expire-sweep';
export const REMINDER_SWEEP_JOB = 'esign.reminders';

const SWEEP_BATCH = 500;

export const esignJobs: JobDefinition<any>[] = [
  {
    // Sent at creation with startAfter = expires_at: the session expires on time.
    name: EXPIRE_SESSION_JOB,
    queue: { retryLimit: 5, retryDelay: 10, retryBackoff: true },
    async handle(services, data: { client_id: string }) {
      const em = services.orm.em.fork();
      if ((await expireDueSessions(services, em, { ids: [data.client_id] })).length > 0) return;
      const session = await em.findOne(EsignSession, { id: data.client_id });
      // Ran early (clocks differ between hosts): come back when it is due.
      if (session?.status === 'pending') {
        await enqueue(services.boss, null, [{ name: EXPIRE_SESSION_JOB, data, startAfter: session.expiresAt }]);
      }
    },
  },
  {
    // The safety net: expires whatever a lost or failed job left pending past its time.
    name: EXPIRE_SWEEP_JOB,
    cron: '* * * * *',
    queue: { policy: 'singleton', retryLimit: 0 },
    async handle(services) {
      let expired: string[];
      do {
        expired = await expireDueSessions(services, services.orm.em.fork(), { limit: SWEEP_BATCH });
      } while (expired.length === SWEEP_BATCH);
    },
  },
  {
    // Reminders are due by the hour: a sweep each minute sends them within a minute of their time.
    name: REMINDER_SWEEP_JOB,
    cron: '* * * * *',
    queue: { policy: 'singleton', retryLimit: 0 },
    async handle(services) {
      let reminded: string[];
      do {
        reminded = await sendDueReminders(services, services.orm.em.fork(), SWEEP_BATCH);
      } while (reminded.length === SWEEP_BATCH);
    },
  },
];
