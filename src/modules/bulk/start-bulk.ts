import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { AppError } from '../../platform/errors';
import { enqueue } from '../../platform/jobs/enqueue';
import type { AppServices } from '../../platform/services';
import type { Readable } from 'node:stream';
import { getOwnTemplate, type Template } from '../templates';
import { recordBulkWebhook } from './bulk-events';
import { BULK_LIMITS } from './bulk-limits';
import type { BulkOptions, BulkRowRequest } from './bulk-rows';
import { csvRows } from './csv-rows';
import { Bulk, BulkRow, type BulkRowError } from './bulk.entity';

export const RUN_BULK_JOB = 'bulk.run';

/** Rows are written this many at a time (one multi-row INSERT each). */
const INSERT_ROWS = 1000;

/**
 * Sends a template to many recipients: the bulk and its rows are stored (all or nothing) and its job queued, in one
 * transaction; the answer comes at once and the job makes one session per row (run-bulk.ts). `rows` is read once, as
 * it comes (a CSV upload is parsed while it streams, csv-rows.ts): at most BULK_LIMITS.rows; a key seen earlier in
 * the bulk fails its row (`duplicate_key`) without stopping the others. At most BULK_LIMITS.runningPerAccount
 * bulks of an account run at once (`409`).
 */
export async function startBulk(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  request: { template_id?: string | null; options: BulkOptions },
  rows: Iterable<BulkRowRequest>,
): Promise<Bulk> {
  const template = await ownTemplate(em, actor, request.template_id);
  return storeBulk(services, em, actor, { template, options: request.options, source: 'json' }, rows);
}

/** A bulk from a CSV upload (both faces): the template checked first, then the rows read as the upload streams. */
export async function startCsvBulk(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  request: { template_id?: string | null; options: BulkOptions },
  csv: Readable,
): Promise<Bulk> {
  const template = await ownTemplate(em, actor, request.template_id);
  return storeBulk(services, em, actor, { template, options: request.options, source: 'csv' }, csvRows(csv, template));
}

function ownTemplate(em: EntityManager, actor: Actor, templateId: string | null | undefined): Promise<Template> {
  if (!templateId?.trim()) throw AppError.missingFields(['template_id']);
  return getOwnTemplate(em, actor, templateId.trim());
}

/** The bulk, its rows and its jobs, in one transaction (startBulk's rules). */
async function storeBulk(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  request: { template: Template; options: BulkOptions; source: 'json' | 'csv' },
  rows: AsyncIterable<BulkRowRequest> | Iterable<BulkRowRequest>,
): Promise<Bulk> {
  const { template } = request;
  return em.transactional(async (tx) => {
    // Counted under the account's row lock, so two bulks sent at once cannot both take the last place.
    await tx
      .getConnection()
      .execute('select 1 from users where id = ? for update', [actor.userId], 'all', tx.getTransactionContext());
    const running = await tx.count(Bulk, { user: actor.userId, status: { $in: ['queued', 'running'] } });
    if (running >= BULK_LIMITS.runningPerAccount)
      throw new AppError('conflict', {
        message: `at most ${BULK_LIMITS.runningPerAccount} bulks of an account run at once; wait for one to finish or cancel one`,
      });
    const bulk = tx.create(Bulk, {
      user: actor.userId,
      template: template.id,
      templateVersion: template.version,
      source: request.source,
      rowCount: 0,
      options: request.options as Record<string, unknown>,
    });
    await tx.flush();
    bulk.rowCount = await insertRows(tx, bulk, rows);
    if (bulk.rowCount === 0) throw AppError.badRequest([{ field: 'rows', problem: 'at least one row' }]);
    await enqueue(
      services.boss,
      tx,
      Array.from({ length: BULK_LIMITS.parallelJobs }, () => ({ name: RUN_BULK_JOB, data: { bulk_id: bulk.id } })),
    );
    await recordBulkWebhook(services, tx, { id: bulk.id, userId: actor.userId }, 'esign.bulk.created');
    await tx.flush();
    return bulk;
  });
}

/** Stores the rows as they come, INSERT_ROWS at a time; answers how many. */
async function insertRows(tx: EntityManager, bulk: Bulk, rows: AsyncIterable<BulkRowRequest> | Iterable<BulkRowRequest>) {
  const keys = new Map<string, number>();
  let batch: Partial<BulkRow>[] = [];
  let position = 0;
  const flush = async () => {
    if (batch.length > 0) await tx.insertMany(BulkRow, batch);
    batch = [];
  };
  for await (const row of rows) {
    if (position >= BULK_LIMITS.rows)
      throw AppError.badRequest([{ field: 'rows', problem: `at most ${BULK_LIMITS.rows} rows in one bulk` }]);
    const key = typeof row.key === 'string' && row.key.trim() ? row.key.trim() : undefined;
    const problem = keyProblem(key, keys.get(key ?? ''));
    if (key && !problem) keys.set(key, position);
    const { key: _key, ...input } = row;
    batch.push({
      bulk,
      position,
      key: key?.slice(0, BULK_LIMITS.keyLength),
      input: input as Record<string, unknown>,
      ...(problem && { status: 'failed' as const, error: problem, doneAt: new Date() }),
    });
    position += 1;
    if (batch.length === INSERT_ROWS) await flush();
  }
  await flush();
  return position;
}

/** Why a row's key fails it: too long, or given to an earlier row of the bulk. */
function keyProblem(key: string | undefined, earlier: number | undefined): BulkRowError | undefined {
  if (key === undefined) return undefined;
  if (key.length > BULK_LIMITS.keyLength)
    return {
      code: 'bad_request',
      message: 'bad_request',
      errors: [{ field: 'key', problem: `at most ${BULK_LIMITS.keyLength} characters` }],
    };
  if (earlier === undefined) return undefined;
  return {
    code: 'duplicate_key',
    message: 'duplicate_key',
    errors: [{ field: 'key', problem: `the key of row ${earlier} of this bulk` }],
  };
}
