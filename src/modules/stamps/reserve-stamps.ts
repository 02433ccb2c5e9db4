import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { formatRupees } from '../../platform/money';
import type { AppServices } from '../../platform/services';
import type { StampPlan } from './plan-stamp';
import type { Actor } from '../../platform/auth/actor';
import { fewestStamps } from './fewest-stamps';
import { publishOrderChange } from './order-events';
import { StampArticle, StampState } from './stamp-reference.entity';

export interface ReservedStamp {
  id: string;
  orderId: string;
  storageKey: string;
  pageCount: number;
}

const ATTEMPTS = 5;

/**
 * Reserves stamps for a session inside the caller's transaction, with row locks, so that no stamp is ever
 * held twice: the amount flow picks the fewest available stamps adding up exactly to the amount (oldest
 * first among equal duties), the explicit flow takes exactly the named ones. Returned in the order their
 * pages go before the document.
 */
export async function reserveStamps(
  services: AppServices,
  tx: EntityManager,
  actor: Actor,
  plan: StampPlan,
  sessionId: string,
): Promise<ReservedStamp[]> {
  const ids =
    plan.kind === 'explicit' ? await lockNamed(tx, actor, plan.instanceIds, plan.mock) : await lockCombination(tx, actor, plan);
  const conn = tx.getConnection();
  const ctx = tx.getTransactionContext();
  await conn.execute(
    `update stamp_instances set status = 'reserved', session_id = ? where id in (${ids.map(() => '?').join(', ')})`,
    [sessionId, ...ids],
    'all',
    ctx,
  );
  const rows = await conn.execute<{ id: string; order_id: string; user_id: string; storage_key: string; page_count: number }[]>(
    `select i.id, i.order_id, i.user_id, f.storage_key, coalesce(f.page_count, 1) as page_count
       from stamp_instances i join files f on f.id = i.pdf_file_id where i.id in (${ids.map(() => '?').join(', ')})`,
    ids,
    'all',
    ctx,
  );
  for (const orderId of new Set(rows.map((row) => row.order_id))) {
    await publishOrderChange(services, tx, { id: orderId, userId: actor.userId });
  }
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => {
    const row = byId.get(id)!;
    return { id, orderId: row.order_id, storageKey: row.storage_key, pageCount: row.page_count };
  });
}

/** What a stamp of the other kind is called in a refusal: a session never mixes mock and real stamps. */
const WRONG_KIND = {
  mockInRealSession:
    'a mock stamp (not a legal stamp): this session takes real stamps only; name real stamps, or send stamp.mock: true for a session on mock stamps',
  realInMockSession: 'a real stamp: this session asked for mock stamps (stamp.mock: true); name mock stamps only',
};

async function lockNamed(tx: EntityManager, actor: Actor, instanceIds: string[], mock: boolean): Promise<string[]> {
  const rows = await tx.getConnection().execute<{ id: string; user_id: string; status: string; mock: boolean }[]>(
    `select i.id, i.user_id, i.status, o.mock from stamp_instances i join stamp_orders o on o.id = i.order_id
        where i.id in (${instanceIds.map(() => '?').join(', ')}) order by i.id for update of i`,
    instanceIds,
    'all',
    tx.getTransactionContext(),
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const problems = instanceIds.flatMap((id) => {
    const row = byId.get(id);
    if (!row || row.user_id !== actor.userId)
      return [{ field: `stamp.stamp_instance_ids.${id}`, problem: 'no such stamp in your inventory' }];
    if (row.status !== 'available') return [{ field: `stamp.stamp_instance_ids.${id}`, problem: `the stamp is ${row.status}` }];
    if (row.mock !== mock) {
      const problem = row.mock ? WRONG_KIND.mockInRealSession : WRONG_KIND.realInMockSession;
      return [{ field: `stamp.stamp_instance_ids.${id}`, problem }];
    }
    return [];
  });
  if (problems.length > 0) throw new AppError('inventory_conflict', { errors: problems });
  return instanceIds;
}

async function lockCombination(tx: EntityManager, actor: Actor, plan: Extract<StampPlan, { kind: 'amount' }>): Promise<string[]> {
  const state = await tx.findOne(StampState, { code: plan.stateCode });
  if (!state)
    throw new AppError('invalid_state_code', { errors: [{ field: 'stamp.state_code', problem: 'not a supported state code' }] });
  if (!(await tx.findOne(StampArticle, { id: plan.articleId, state }))) {
    throw new AppError('invalid_article_id', {
      errors: [{ field: 'stamp.article_id', problem: `not an article of ${state.code}` }],
    });
  }
  const conn = tx.getConnection();
  const ctx = tx.getTransactionContext();
  // Real stamps only, or mock stamps only when the session asks for them: never a mix.
  const filters = [`i.user_id = ?`, `i.state_code = ?`, `i.article_id = ?`, `i.status = 'available'`, `o.mock = ?`];
  const params: unknown[] = [actor.userId, state.code, plan.articleId, plan.mock];
  if (plan.firstPartyName) {
    filters.push('o.first_party_name = ?');
    params.push(plan.firstPartyName);
  }
  if (plan.secondPartyName) {
    filters.push('o.second_party_name = ?');
    params.push(plan.secondPartyName);
  }
  const where = filters.join(' and ');
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const stock = await conn.execute<{ duty_paise: string; n: number }[]>(
      `select i.duty_paise, count(*)::int as n from stamp_instances i join stamp_orders o on o.id = i.order_id
        where ${where} group by i.duty_paise`,
      params,
      'all',
      ctx,
    );
    const combination = fewestStamps(
      plan.amountPaise,
      stock.map((row) => ({ dutyPaise: BigInt(row.duty_paise), count: row.n })),
    );
    if (!combination) break;
    const picked: string[] = [];
    let short = false;
    for (const [duty, count] of combination) {
      // Stamps another initialization holds right now are skipped, never waited for or taken twice.
      const rows = await conn.execute<{ id: string }[]>(
        `select i.id from stamp_instances i join stamp_orders o on o.id = i.order_id
          where ${where} and i.duty_paise = ? order by i.created_at, i.serial, i.id limit ? for update of i skip locked`,
        [...params, duty.toString(), count],
        'all',
        ctx,
      );
      if (rows.length < count) short = true;
      picked.push(...rows.map((row) => row.id));
    }
    if (!short) return picked;
    // Others reserved some of what the counts showed: count again without them.
    await new Promise((resolve) => setTimeout(resolve, 10 * (attempt + 1)));
  }
  throw new AppError('stamp_combination_not_found', {
    errors: [
      {
        field: 'stamp.amount',
        problem: `no available ${plan.mock ? 'mock' : 'real'} ${state.code} ${plan.articleId} stamps add up to exactly ${formatRupees(plan.amountPaise)}${plan.mock ? '' : ' (mock stamps are taken only with stamp.mock: true)'}`,
      },
    ],
  });
}

/** How a session ends, as its stamps see it. */
export type SessionEnd = 'completed' | 'cancelled' | 'expired' | 'declined';

/**
 * What a session's end does to its stamps, in the transaction that ends it: completion uses them; cancel, expiry
 * and decline give them back to the inventory, where they are available again (docs/stamps.md: a certificate
 * not used in a signed document keeps its force). The database writes each move in the stamp's history, with the
 * end as its reason.
 */
export async function settleSessionStamps(
  services: AppServices,
  tx: EntityManager,
  sessionIds: string[],
  end: SessionEnd,
): Promise<void> {
  if (sessionIds.length === 0) return;
  const conn = tx.getConnection();
  const ctx = tx.getTransactionContext();
  const ids = sessionIds.map(() => '?').join(', ');
  await conn.execute(`select set_config('esign.stamp_move_reason', ?, true)`, [`session_${end}`], 'all', ctx);
  const rows = await conn.execute<{ order_id: string; user_id: string }[]>(
    end === 'completed'
      ? `update stamp_instances set status = 'used' where session_id in (${ids}) and status = 'reserved' returning order_id, user_id`
      : `update stamp_instances set status = 'available', session_id = null where session_id in (${ids}) and status = 'reserved' returning order_id, user_id`,
    sessionIds,
    'all',
    ctx,
  );
  // Transaction-local, but cleared at once: a later move in the same transaction has a reason of its own.
  await conn.execute(`select set_config('esign.stamp_move_reason', '', true)`, [], 'all', ctx);
  const orders = new Map(rows.map((row) => [row.order_id, row.user_id]));
  for (const [orderId, userId] of orders) await publishOrderChange(services, tx, { id: orderId, userId });
}
