import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { checkPage, pageOf } from '../../platform/graphql/paging';
import type { Actor } from '../../platform/auth/actor';
import { Notification, type NotificationStatus } from './notification.entity';

const STATUSES: NotificationStatus[] = ['queued', 'sent', 'failed'];

/**
 * The owner's outbox, newest first; `client_id` narrows it to one session. The caller has checked that the
 * session is the actor's (the esign module answers `not_found` for another's).
 */
export async function listOwnNotifications(
  em: EntityManager,
  actor: Actor,
  args: { page: number; size: number; client_id?: string | null; status?: string | null },
): Promise<{ items: Notification[]; has_next: boolean }> {
  const { offset, limit } = checkPage(args);
  if (args.status != null && !STATUSES.includes(args.status as NotificationStatus)) {
    throw AppError.badRequest([{ field: 'status', problem: `must be one of ${STATUSES.join(', ')}` }]);
  }
  const rows = await em.find(
    Notification,
    {
      user: actor.userId,
      ...(args.client_id != null ? { session: args.client_id } : {}),
      ...(args.status != null ? { status: args.status as NotificationStatus } : {}),
    },
    { orderBy: { createdAt: 'desc', seq: 'desc' }, offset, limit: limit + 1 },
  );
  return pageOf(rows, limit);
}
