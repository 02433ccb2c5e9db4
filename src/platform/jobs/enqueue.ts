import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type PgBoss from 'pg-boss';
import { transactionDb } from './transaction-db';

/**
 * The one way to queue jobs. Given an entity manager inside a transaction, the jobs are written by that
 * transaction: a change that rolls back queues nothing, one that commits has its jobs, and no worker sees a
 * job before the rows it needs. `null` is for callers that hold no transaction (a job re-queueing itself,
 * a sweep): the jobs are queued at once. Queue options (retries, policy) come from the queue unless a job
 * gives its own; a job with an `id` that exists already is left as it is.
 */
export async function enqueue(boss: PgBoss, em: EntityManager | null, jobs: readonly PgBoss.JobInsert[]): Promise<void> {
  if (jobs.length === 0) return;
  if (!em) return boss.insert([...jobs]);
  if (!em.isInTransaction()) throw new Error('enqueue joins a transaction: call it inside one, or pass null');
  return boss.insert([...jobs], { db: transactionDb(em) });
}

/**
 * A job id (a UUID, as pg-boss wants) made from a text: the same text, the same id, so queueing a job under it twice
 * queues it once (a wake-up scheduled for a given time, a check per second).
 */
export function jobIdOf(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
