import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { initializeFromTemplate, Template } from '../templates';
import { announceBulkProgress, publishBulkChange, recordBulkWebhook } from './bulk-events';
import { BULK_LIMITS } from './bulk-limits';
import { sessionRequestOf, type BulkOptions, type BulkRowRequest } from './bulk-rows';
import { Bulk, type BulkRowError } from './bulk.entity';

/**
 * The bulk's job, for about BULK_LIMITS.sliceMs: rows are made into sessions in chunks, each chunk one transaction
 * in which every row's session and the row's outcome commit together (a row that fails rolls back to its own
 * savepoint). So a worker killed at any moment leaves each row either made, with its one session, or still queued,
 * with none: the job that resumes it (the continuation, or the sweep's) makes each row once. Several jobs may work
 * one bulk at once (BULK_LIMITS.parallelJobs): each claims its chunk's rows, skipping those another holds. Answers
 * whether rows are left for a continuation.
 */
export async function runBulkSlice(services: AppServices, bulkId: string): Promise<'more' | 'done'> {
  const started = Date.now();
  const bulk = await services.orm.em.fork().findOne(Bulk, { id: bulkId });
  if (!bulk || bulk.status === 'completed' || bulk.status === 'cancelled') return 'done';
  // The template as it is now (a deleted one fails each row as initialize-from-template would: 404).
  const template = await services.orm.em.fork().findOneOrFail(Template, { id: bulk.template.id });
  // The bulk acts for its owner, as the owner's own initialize-from-template calls would.
  const actor: Actor = { userId: bulk.user.id, tokenId: `bulk:${bulk.id}` };
  const owner = { id: bulk.id, userId: bulk.user.id };
  while (Date.now() - started < BULK_LIMITS.sliceMs) {
    const made = await services.orm.em.fork().transactional((tx) => makeChunk(services, tx, { bulk, template, actor }));
    if (made === 0) {
      await completeWhenDone(services, owner);
      return 'done';
    }
    // After the chunk's commit, in a short transaction of its own: jobs working the bulk at once never wait on it.
    await services.orm.em.fork().transactional(async (tx) => {
      await tx
        .getConnection()
        .execute(
          `update bulks set status = 'running', heartbeat_at = now() where id = ? and status in ('queued', 'running')`,
          [bulk.id],
          'all',
          tx.getTransactionContext(),
        );
      await announceBulkProgress(services, tx, owner);
    });
  }
  return 'more';
}

/**
 * One chunk: the next queued rows in order that no other job holds, each made or failed. The bulk row is held in
 * KEY SHARE meanwhile: chunks run side by side, and a cancel (FOR UPDATE) waits for them and sees their rows made.
 * Answers how many rows it took (0: none left to take, or the bulk ended).
 */
async function makeChunk(
  services: AppServices,
  tx: EntityManager,
  at: { bulk: Bulk; template: Template; actor: Actor },
): Promise<number> {
  const { bulk } = at;
  const context = tx.getTransactionContext();
  const [state] = await tx
    .getConnection()
    .execute<{ status: string }[]>('select status from bulks where id = ? for key share', [bulk.id], 'all', context);
  if (!state || state.status === 'completed' || state.status === 'cancelled') return 0;
  // Read and written by SQL, not through the unit of work (each row's session is made in a fork of its own).
  const rows = await tx.getConnection().execute<QueuedRow[]>(
    `select position, input from bulk_rows where bulk_id = ? and status = 'queued'
        order by position limit ? for update skip locked`,
    [bulk.id, BULK_LIMITS.chunkRows],
    'all',
    context,
  );
  for (const row of rows) await makeRow(services, tx, at, row);
  return rows.length;
}

/**
 * The bulk completes once no row is queued: decided by one statement, so that of the jobs that find nothing left
 * exactly one completes it (a row another job is still making reads as queued until that job commits, and that job
 * then completes it).
 */
async function completeWhenDone(services: AppServices, owner: { id: string; userId: string }): Promise<void> {
  await services.orm.em.fork().transactional(async (tx) => {
    const completed = await tx.getConnection().execute<{ id: string }[]>(
      `update bulks set status = 'completed', finished_at = now(), heartbeat_at = now()
        where id = ? and status in ('queued', 'running')
          and not exists (select 1 from bulk_rows where bulk_id = ? and status = 'queued')
        returning id`,
      [owner.id, owner.id],
      'all',
      tx.getTransactionContext(),
    );
    if (completed.length === 0) return;
    await publishBulkChange(services, tx, owner);
    await recordBulkWebhook(services, tx, owner, 'esign.bulk.completed');
  });
}

interface QueuedRow {
  position: number;
  input: BulkRowRequest;
}

/** One row: the session initialize-from-template makes of it, or its refusal, written on the row. */
async function makeRow(
  services: AppServices,
  tx: EntityManager,
  at: { bulk: Bulk; template: Template; actor: Actor },
  row: QueuedRow,
): Promise<void> {
  const request = sessionRequestOf(at.template, at.bulk.options as BulkOptions, row.input);
  let outcome: { status: 'created'; sessionId: string } | { status: 'failed'; error: BulkRowError };
  try {
    // In the chunk's transaction, through a fork with an empty identity map (the unit of work then weighs this row's
    // entities, not the whole chunk's). Nothing is written before createSession's own transaction, which nests as a
    // savepoint: a refusal after something was written (stamps not found) rolls back this row only.
    const fork = tx.fork({ clear: true, keepTransactionContext: true });
    // Invites paced: row n's go n / BULK_INVITES_PER_SECOND seconds after the bulk was sent, never in one burst.
    const invitesNotBefore = new Date(at.bulk.createdAt.getTime() + (row.position / services.config.bulkInvitesPerSecond) * 1000);
    const session = await initializeFromTemplate(services, fork, at.actor, request, invitesNotBefore);
    outcome = { status: 'created', sessionId: session.id };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    outcome = { status: 'failed', error: { code: error.code, message: error.message, errors: error.errors ?? [] } };
  }
  await tx
    .getConnection()
    .execute(
      `update bulk_rows set status = ?, session_id = ?, error = ?, done_at = now() where bulk_id = ? and position = ?`,
      [
        outcome.status,
        outcome.status === 'created' ? outcome.sessionId : null,
        outcome.status === 'failed' ? JSON.stringify(outcome.error) : null,
        at.bulk.id,
        row.position,
      ],
      'all',
      tx.getTransactionContext(),
    );
}
