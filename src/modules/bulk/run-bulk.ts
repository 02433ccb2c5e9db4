import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import {
  cachedReferences,
  certificationReader,
  createSessions,
  refuseForbiddenByCertification,
  type SessionToCreate,
} from '../esign';
import { originOf, planFromTemplate, prepareTemplate, Template, type PreparedTemplate } from '../templates';
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
 * One chunk: the next queued rows in order that no other job holds, each made or failed, and every row's outcome
 * written by one statement. The bulk row is held in KEY SHARE meanwhile: chunks run side by side, and a cancel (FOR
 * UPDATE) waits for them and sees their rows made. Answers how many rows it took (0: none left to take, or the bulk
 * ended).
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
  // Read and written by SQL, not through the unit of work.
  const rows = await tx.getConnection().execute<QueuedRow[]>(
    `select position, input from bulk_rows where bulk_id = ? and status = 'queued'
        order by position limit ? for update skip locked`,
    [bulk.id, BULK_LIMITS.chunkRows],
    'all',
    context,
  );
  if (rows.length === 0) return 0;
  const outcomes = await makeRows(services, tx, at, rows);
  await tx.getConnection().execute(
    `update bulk_rows set status = row.status, session_id = row.session_id, error = row.error, done_at = now()
       from jsonb_to_recordset(?::jsonb) as row(position integer, status text, session_id text, error jsonb)
      where bulk_rows.bulk_id = ? and bulk_rows.position = row.position`,
    [JSON.stringify(rows.map((row) => ({ position: row.position, ...outcomes.get(row.position)! }))), bulk.id],
    'all',
    context,
  );
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

type RowOutcome = { status: 'created'; session_id: string } | { status: 'failed'; error: BulkRowError };

const failure = (error: AppError): RowOutcome => ({
  status: 'failed',
  error: { code: error.code, message: error.message, errors: error.errors ?? [] },
});

/**
 * The chunk's rows, each planned exactly as initialize-from-template plans it (same checks, same refusals), with the
 * template, its documents and what the rows refer to read once for the chunk. The rows that plan are created
 * together, one statement per table; a row with a stamp is created alone, in a savepoint of its own, so that stamps
 * not found roll back that row only. Answers each row's outcome by position.
 */
async function makeRows(
  services: AppServices,
  tx: EntityManager,
  at: { bulk: Bulk; template: Template; actor: Actor },
  rows: QueuedRow[],
): Promise<Map<number, RowOutcome>> {
  const outcomes = new Map<number, RowOutcome>();
  let prepared: PreparedTemplate;
  try {
    prepared = await prepareTemplate(tx, at.actor, at.template.id);
  } catch (error) {
    // The template is gone (deleted since the bulk was sent): every row fails as initialize-from-template would.
    if (!(error instanceof AppError)) throw error;
    for (const row of rows) outcomes.set(row.position, failure(error));
    return outcomes;
  }
  const references = cachedReferences(tx, at.actor);
  const certifications = certificationReader(services);
  const together: { position: number; item: SessionToCreate & { stamped: Buffer } }[] = [];
  for (const row of rows) {
    try {
      const plan = await planFromTemplate(
        services,
        references,
        prepared,
        sessionRequestOf(prepared.template, at.bulk.options as BulkOptions, row.input),
      );
      const stamped = await refuseForbiddenByCertification(services, plan, certifications);
      // Invites paced: row n's go n / BULK_INVITES_PER_SECOND seconds after the bulk was sent, never in one burst.
      const invitesNotBefore = new Date(
        at.bulk.createdAt.getTime() + (row.position / services.config.bulkInvitesPerSecond) * 1000,
      );
      const item = { plan, origin: originOf(prepared), invitesNotBefore, stamped };
      if (plan.stamp) outcomes.set(row.position, await createAlone(services, tx, at.actor, item));
      else together.push({ position: row.position, item });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      outcomes.set(row.position, failure(error));
    }
  }
  if (together.length === 0) return outcomes;
  try {
    const sessions = await createSessions(
      services,
      tx,
      at.actor,
      together.map(({ item }) => item),
    );
    together.forEach(({ position }, index) => outcomes.set(position, { status: 'created', session_id: sessions[index]!.id }));
  } catch (error) {
    // Not expected of planned rows; should one refuse, it fails alone and the others are made one by one.
    if (!(error instanceof AppError)) throw error;
    for (const { position, item } of together) outcomes.set(position, await createAlone(services, tx, at.actor, item));
  }
  return outcomes;
}

/** One row's session in a savepoint of its own (createSessions nests in the chunk's transaction). */
async function createAlone(
  services: AppServices,
  tx: EntityManager,
  actor: Actor,
  item: SessionToCreate & { stamped: Buffer },
): Promise<RowOutcome> {
  try {
    const [session] = await createSessions(services, tx, actor, [item]);
    return { status: 'created', session_id: session!.id };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return failure(error);
  }
}
