import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { AppError } from '../../platform/errors';
import { checkPage, pageOf } from '../../platform/graphql/paging';
import { Bulk, BulkRow, type BulkRowStatus } from './bulk.entity';
import { toBulkView, type BulkCounts, type BulkType } from './bulk.types';

const ROW_STATUSES: readonly BulkRowStatus[] = ['queued', 'created', 'failed', 'skipped'];

/** One of the caller's bulks; another user's or an unknown one is `404 not_found`. */
export async function getOwnBulk(em: EntityManager, actor: Actor, clientId: string | null | undefined): Promise<Bulk> {
  if (!clientId?.trim()) throw AppError.missingFields(['client_id']);
  const bulk = await em.findOne(Bulk, { id: clientId.trim(), user: actor.userId });
  if (!bulk) throw new AppError('not_found', { errors: [{ field: 'client_id', problem: 'no such bulk' }] });
  return bulk;
}

export function listOwnBulks(em: EntityManager, actor: Actor, args: { page?: number | null; size?: number | null }) {
  const { offset, limit } = checkPage(args);
  return em
    .find(Bulk, { user: actor.userId }, { orderBy: { createdAt: 'desc', id: 'asc' }, offset, limit: limit + 1 })
    .then((rows) => pageOf(rows, limit));
}

/** Rows by state and the sessions made by state, for each bulk, in two grouped reads. */
export async function bulkCounts(em: EntityManager, bulkIds: string[]): Promise<Map<string, BulkCounts>> {
  const counts = new Map<string, BulkCounts>(
    bulkIds.map((id) => [id, { rows: Object.fromEntries(ROW_STATUSES.map((s) => [s, 0])) as BulkCounts['rows'], sessions: {} }]),
  );
  if (bulkIds.length === 0) return counts;
  const connection = em.getConnection();
  const rows = await connection.execute<{ bulk_id: string; status: BulkRowStatus; count: string }[]>(
    'select bulk_id, status, count(*) as count from bulk_rows where bulk_id in (?) group by bulk_id, status',
    [bulkIds],
  );
  for (const row of rows) counts.get(row.bulk_id)!.rows[row.status] = Number(row.count);
  const sessions = await connection.execute<{ bulk_id: string; status: string; count: string }[]>(
    `select r.bulk_id, s.status, count(*) as count from bulk_rows r join esign_sessions s on s.id = r.session_id
      where r.bulk_id in (?) group by r.bulk_id, s.status`,
    [bulkIds],
  );
  for (const row of sessions) counts.get(row.bulk_id)!.sessions[row.status] = Number(row.count);
  return counts;
}

/** A page of a bulk's rows in order, optionally of one status. */
export async function pageBulkRows(
  em: EntityManager,
  actor: Actor,
  args: { client_id?: string | null; page?: number | null; size?: number | null; status?: string | null },
) {
  const bulk = await getOwnBulk(em, actor, args.client_id);
  if (args.status != null && !ROW_STATUSES.includes(args.status as BulkRowStatus))
    throw AppError.badRequest([{ field: 'status', problem: `one of ${ROW_STATUSES.join(', ')}` }]);
  const { offset, limit } = checkPage(args);
  const rows = await em.find(
    BulkRow,
    { bulk: bulk.id, ...(args.status ? { status: args.status as BulkRowStatus } : {}) },
    { orderBy: { position: 'asc' }, offset, limit: limit + 1 },
  );
  return { bulk, ...pageOf(rows, limit) };
}

/** Every row of a bulk in order, `batch` at a time with the status of the session each made: for the CSV download. */
export async function* allBulkRows(em: EntityManager, bulkId: string, batch = 1000) {
  let after = -1;
  for (;;) {
    const rows = await em.getConnection().execute<
      {
        position: number;
        key: string | null;
        status: string;
        session_id: string | null;
        session_status: string | null;
        error: any;
      }[]
    >(
      `select r.position, r.key, r.status, r.session_id, s.status as session_status, r.error
         from bulk_rows r left join esign_sessions s on s.id = r.session_id
        where r.bulk_id = ? and r.position > ? order by r.position limit ?`,
      [bulkId, after, batch],
    );
    if (rows.length === 0) return;
    yield rows;
    after = rows.at(-1)!.position;
  }
}

/** A bulk with its counts, read now. */
export async function bulkView(em: EntityManager, bulk: Bulk): Promise<BulkType> {
  return toBulkView(bulk, (await bulkCounts(em, [bulk.id])).get(bulk.id)!);
}
