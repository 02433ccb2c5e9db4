import type PgBoss from 'pg-boss';
import { logScope, type Logger } from '../logger';

/**
 * What a job's handler is handed: the process's services. This file uses only the queue and the log; the
 * composition (platform/services.ts) widens the interface to the whole AppServices by augmenting it, so the
 * modules' handlers see every service while jobs/ imports nothing above it.
 */
export interface JobServices {
  boss: PgBoss;
  log: Logger;
}

/** A queue, its options, and an idempotent handler: running a job twice must change nothing the second time. */
export interface JobDefinition<T extends object = Record<string, unknown>> {
  name: string;
  queue?: Omit<PgBoss.Queue, 'name'>;
  /** pg-boss cron schedule (UTC), for sweeps that catch what a lost or late job missed. */
  cron?: string;
  /** Jobs of this queue a process runs at once (default 1): for jobs that mostly wait on the network. */
  concurrency?: number;
  handle(services: JobServices, data: T, job: PgBoss.Job<T>): Promise<void>;
}

/** Every process creates the queues it sends to (pg-boss drops sends to unknown queues silently). */
export async function createQueues(boss: PgBoss, definitions: readonly JobDefinition<any>[]): Promise<void> {
  for (const definition of definitions) {
    if (!(await boss.getQueue(definition.name))) {
      try {
        await boss.createQueue(definition.name, { name: definition.name, ...definition.queue });
      } catch (error) {
        // Another process created it between our look and our create.
        if (!(await boss.getQueue(definition.name))) throw error;
      }
    }
    if (definition.cron) await boss.schedule(definition.name, definition.cron, {});
  }
}

/**
 * Runs the handlers in this process. Jobs are fetched one at a time, so one failure fails one job only.
 *
 * pg-boss 10 sleeps out the rest of the polling interval after every fetch, even one that found a job: alone, a
 * worker fetching one job at a time would run at most one job per interval (2 jobs/s at 0.5 s). After a job that
 * succeeded the worker is woken to fetch the next one at once; an empty fetch, or a failed job, still waits.
 */
export async function startWorkers(
  services: JobServices,
  definitions: readonly JobDefinition<any>[],
  pollingIntervalSeconds: number,
) {
  for (const definition of definitions) {
    for (let slot = 0; slot < (definition.concurrency ?? 1); slot++)
      await startWorker(services, definition, pollingIntervalSeconds);
  }
}

async function startWorker(services: JobServices, definition: JobDefinition<any>, pollingIntervalSeconds: number) {
  let workerId: string | undefined;
  workerId = await services.boss.work(
    definition.name,
    { batchSize: 1, pollingIntervalSeconds },
    async (jobs: PgBoss.Job<object>[]) => {
      for (const job of jobs) {
        await logScope.run({ req_id: `job:${definition.name}:${job.id}` }, async () => {
          try {
            await definition.handle(services, job.data as never, job as never);
          } catch (error) {
            services.log.error({ err: error, job: job.id }, `job ${definition.name} failed`);
            throw error;
          }
        });
      }
      if (workerId) services.boss.notifyWorker(workerId);
    },
  );
}
