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
 * with none: the job that resumes it (the continuation, or the sweep's) makes each row once. Answers whether rows
 * are left for a continuation.
 */
export async function runBulkSlice(services: AppServices, bulkId: string): Promise<'more' | 'done'> {
  const started = Date.now();
  const bulk = await services.orm.em.fork().findOne(Bulk, { id: bulkId });
  if (!bulk || bulk.status === 'completed' || bulk.status === 'cancelled') return 'done';
  // The template as it is now (a deleted one fails each row as initialize-from-template would: 404).
  const template = await services.orm.em.fork().findOneOrFail(Template, { id: bulk.template.id });
  // The bulk acts for its owner, as the owner's own initialize-from-template calls would.
  const actor: Actor = { userId: bulk.user.id, tokenId: `bulk:${bulk.id}` };
  while (Date.now() - started < BULK_LIMITS.sliceMs) {
    const made = await services.orm.em.fork().transactional((tx) => makeChunk(services, tx, { bulk, template, actor }));
    if (made === 0) return 'done';
  }
  return 'more';
}

/**
 * One chunk, under the bulk row's lock (so a cancel waits for it, and sees its rows made): the next queued rows in
 * order, each made or failed; with none left, the bulk completes. Answers how many rows it took.
 */
async function makeChunk(
  services: AppServices,
  tx: EntityManager,
  at: { bulk: Bulk; template: Template; actor: Actor },
): Promise<number> {
  const { bulk, template, actor } = at;
  const context = tx.getTransactionContext();
  const [state] = await tx
    .getConnection()
    .execute<{ status: string }[]>('select status from bulks where id = ? for update', [bulk.id], 'all', context);
  if (!state || state.status === 'completed' || state.status === 'cancelled') return 0;
  const owner = { id: bulk.id, userId: bulk.user.id };
  // Read and written by SQL, not through the unit of work: each row's session is made in a nested transaction whose
  // fork merges its entities back into this one, and a row entity changed here could be replaced by that merge.
  const rows = await tx
    .getConnection()
    .execute<QueuedRow[]>(
      `select position, input from bulk_rows where bulk_id = ? and status = 'queued' order by position limit ?`,
      [bulk.id, BULK_LIMITS.chunkRows],
      'all',
      context,
    );
  for (const row of rows) await makeRow(services, tx, { bulk, template, actor }, row);
  if (rows.length === 0) {
    await tx
      .getConnection()
      .execute(
        `update bulks set status = 'completed', finished_at = now(), heartbeat_at = now() where id = ?`,
        [bulk.id],
        'all',
        context,
      );
    await publishBulkChange(services, tx, owner);
    await recordBulkWebhook(services, tx, owner, 'esign.bulk.completed');
    return 0;
  }
  await tx
    .getConnection()
    .execute(`update bulks set status = 'running', heartbeat_at = now() where id = ?`, [bulk.id], 'all', context);
  await announceBulkProgress(services, tx, owner);
  return rows.length;
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
    // Its own savepoint: a refusal after something was written (stamps not found) rolls back this row only.
    const session = await tx.transactional((inner) => initializeFromTemplate(services, inner, at.actor, request));
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
