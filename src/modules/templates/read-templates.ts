import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { checkPage, pageOf } from '../../platform/graphql/paging';
import type { Actor } from '../../platform/auth/actor';
import { Template } from './template.entity';

/** One of the caller's live templates; a deleted, foreign or unknown one is `404 not_found`. */
export async function getOwnTemplate(em: EntityManager, actor: Actor, clientId: string): Promise<Template> {
  const template = await em.findOne(Template, { id: clientId, user: actor.userId, deletedAt: null });
  if (!template) throw new AppError('not_found', { errors: [{ field: 'client_id', problem: 'no such template' }] });
  return template;
}

export async function listOwnTemplates(
  em: EntityManager,
  actor: Actor,
  args: { page: number; size: number; folder?: string | null },
): Promise<{ items: Template[]; has_next: boolean }> {
  const { offset, limit } = checkPage(args);
  const rows = await em.find(
    Template,
    { user: actor.userId, deletedAt: null, ...(args.folder != null ? { folder: args.folder } : {}) },
    { orderBy: { createdAt: 'desc', seq: 'desc' }, offset, limit: limit + 1 },
  );
  return pageOf(rows, limit);
}

/** Hides the template from reads and new sessions; sessions already started keep working and keep its id. */
export async function deleteTemplate(em: EntityManager, actor: Actor, clientId: string | null | undefined): Promise<Template> {
  if (!clientId) throw new AppError('bad_request', { errors: [{ field: 'client_id', problem: 'required' }] });
  const template = await getOwnTemplate(em, actor, clientId);
  template.deletedAt = new Date();
  await em.flush();
  return template;
}
