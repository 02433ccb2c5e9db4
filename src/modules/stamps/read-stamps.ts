import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { leanRows } from '../../platform/db/lean-sql';
import type { Orm } from '../../platform/db/orm';
import { checkPage, pageOf } from '../../platform/graphql/paging';
import type { AppServices } from '../../platform/services';
import { StoredFile } from '../files';
import type { Actor } from '../../platform/auth/actor';
import { STAMP_STATUSES, StampInstance, StampOrder, type StampStatus } from './stamp-order.entity';
import { StampInstanceEvent } from './stamp-instance-event.entity';
import { StampArticle, StampState } from './stamp-reference.entity';

export async function listStates(em: EntityManager): Promise<StampState[]> {
  return em.find(StampState, {}, { orderBy: { name: 'asc' } });
}

async function knownState(em: EntityManager, stateCode: string): Promise<StampState> {
  const state = await em.findOne(StampState, { code: stateCode.trim().toUpperCase() });
  if (!state)
    throw new AppError('invalid_state_code', { errors: [{ field: 'state_code', problem: 'not a supported state code' }] });
  return state;
}

export async function listArticles(em: EntityManager, stateCode: string | null | undefined): Promise<StampArticle[]> {
  if (!stateCode?.trim()) throw AppError.missingFields(['state_code']);
  const state = await knownState(em, stateCode);
  return em.find(StampArticle, { state }, { orderBy: { id: 'asc' } });
}

/** What an unknown or foreign order answers. */
export const orderNotFound = () =>
  new AppError('not_found', { errors: [{ field: 'client_id', problem: 'no such stamp order' }] });

/** One of the caller's orders; an unknown or foreign one is `404 not_found`. */
export async function getOwnOrder(em: EntityManager, actor: Actor, clientId: string): Promise<StampOrder> {
  const order = await em.findOne(StampOrder, { id: clientId, user: actor.userId });
  if (!order) throw orderNotFound();
  return order;
}

/**
 * getOwnOrder's check alone, one row of one column past the ORM: what a subscription checks before it starts
 * (thousands of clients following one order each ask it once).
 */
export async function checkOwnOrder(orm: Orm, actor: Actor, clientId: string): Promise<void> {
  const rows = await leanRows(orm, 'select 1 from stamp_orders where id = $1 and user_id = $2', [clientId, actor.userId]);
  if (rows.length === 0) throw orderNotFound();
}

export interface OrderListArgs {
  page: number;
  size: number;
  client_id?: string | null;
  state_code?: string | null;
  article_id?: string | null;
  status?: string | null;
}

export async function listOwnOrders(
  em: EntityManager,
  actor: Actor,
  args: OrderListArgs,
): Promise<{ items: StampOrder[]; has_next: boolean }> {
  const { offset, limit } = checkPage(args);
  if (args.status != null && !STAMP_STATUSES.includes(args.status as StampStatus)) {
    throw AppError.badRequest([{ field: 'status', problem: `must be one of ${STAMP_STATUSES.join(', ')}` }]);
  }
  if (args.article_id != null && args.state_code == null) throw AppError.missingFields(['state_code']);
  const state = args.state_code != null ? await knownState(em, args.state_code) : undefined;
  const articleId = args.article_id?.trim().toUpperCase();
  if (articleId != null && !(await em.findOne(StampArticle, { id: articleId, state }))) {
    throw new AppError('invalid_article_id', { errors: [{ field: 'article_id', problem: `not an article of ${state!.code}` }] });
  }
  const where: Record<string, unknown> = { user: actor.userId };
  if (args.client_id != null) where.id = args.client_id;
  if (state) where.stateCode = state.code;
  if (articleId != null) where.articleId = articleId;
  const query = em.createQueryBuilder(StampOrder, 'o').select('*').where(where);
  // Orders with at least one instance in that status, decided in the same statement as the page.
  if (args.status != null) {
    query.andWhere('exists (select 1 from stamp_instances i where i.order_id = o.id and i.status = ?)', [args.status]);
  }
  const rows = await query
    .orderBy({ createdAt: 'desc', seq: 'desc' })
    .offset(offset)
    .limit(limit + 1)
    .getResultList();
  return pageOf(rows, limit);
}

/** A short-lived link to one procured stamp's certificate; pending or rejected stamps have none. */
export async function downloadStampPdf(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  stampId: string | null | undefined,
): Promise<{ stamp_id: string; url: string; expires_in: number; page_count: number }> {
  if (!stampId) throw AppError.missingFields(['client_id']);
  const instance = await em.findOne(StampInstance, { id: stampId, user: actor.userId });
  if (!instance)
    throw new AppError('not_found', {
      errors: [{ field: 'client_id', problem: 'no such stamp instance (use stamps[].stamp_id)' }],
    });
  if (!instance.pdfFile) {
    throw new AppError('not_found', {
      errors: [{ field: 'client_id', problem: `the stamp is ${instance.status}: it has no certificate` }],
    });
  }
  const file = await em.findOneOrFail(StoredFile, { id: instance.pdfFile.id });
  const link = services.urls.issue(
    { key: file.storageKey, filename: file.name, contentType: 'application/pdf' },
    services.config.downloadUrlTtlSeconds,
  );
  return { stamp_id: instance.id, url: link.url, expires_in: link.expires_in, page_count: file.pageCount ?? 1 };
}

/** One of the caller's stamp instances with its whole history, oldest step first; unknown or foreign: `404`. */
export async function getOwnInstance(
  em: EntityManager,
  actor: Actor,
  stampId: string | null | undefined,
): Promise<{ instance: StampInstance; history: StampInstanceEvent[] }> {
  if (!stampId) throw AppError.missingFields(['client_id']);
  const instance = await em.findOne(StampInstance, { id: stampId, user: actor.userId });
  if (!instance) {
    throw new AppError('not_found', {
      errors: [{ field: 'client_id', problem: 'no such stamp instance (use stamps[].stamp_id)' }],
    });
  }
  const history = await em.find(StampInstanceEvent, { instance: instance.id }, { orderBy: { id: 'asc' } });
  return { instance, history };
}
