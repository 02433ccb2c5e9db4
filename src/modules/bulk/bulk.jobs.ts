import { enqueue } from '../../platform/jobs/enqueue';
import type { JobDefinition } from '../../platform/jobs/jobs';
import { BULK_LIMITS } from './bulk-limits';
import { CANCEL_BULK_SESSIONS_JOB, cancelBulkSessions } from './cancel-bulk';
import { runBulkSlice } from './run-bulk';
import { RUN_BULK_JOB } from './start-bulk';

export const RESUME_BULKS_JOB = 'bulk.resume';

export const bulkJobs: JobDefinition<any>[] = [
  {
    // A slice of a bulk's rows, then its continuation: each job is short, and a lost one loses at most a chunk.
    name: RUN_BULK_JOB,
    queue: { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 300 },
    // Four slices at once per process (of one bulk or several): each claims its own rows.
    concurrency: BULK_LIMITS.parallelJobs,
    async handle(services, data: { bulk_id: string }) {
      if ((await runBulkSlice(services, data.bulk_id)) === 'more')
        await enqueue(services.boss, null, [{ name: RUN_BULK_JOB, data }]);
    },
  },
  {
    name: CANCEL_BULK_SESSIONS_JOB,
    queue: { retryLimit: 5, retryDelay: 5, retryBackoff: true },
    async handle(services, data: { bulk_id: string }) {
      await cancelBulkSessions(services, data.bulk_id);
    },
  },
  {
    // The safety net: a bulk whose job died with its worker (kill -9) is taken up again; rows already made stay made.
    name: RESUME_BULKS_JOB,
    cron: '* * * * *',
    queue: { policy: 'singleton', retryLimit: 0 },
    async handle(services) {
      const stale = await services.orm.em
        .fork()
        .getConnection()
        .execute<{ id: string }[]>(
          `select id from bulks where status in ('queued', 'running')
             and coalesce(heartbeat_at, created_at) < now() - make_interval(secs => ?)`,
          [services.config.bulkStaleSeconds],
        );
      if (stale.length > 0)
        await enqueue(
          services.boss,
          null,
          stale.flatMap(({ id }) =>
            Array.from({ length: BULK_LIMITS.parallelJobs }, () => ({ name: RUN_BULK_JOB, data: { bulk_id: id } })),
          ),
        );
    },
  },
];
