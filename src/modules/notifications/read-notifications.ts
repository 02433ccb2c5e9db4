import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { checkPage, pageOf } from '../../platform/graphql/paging';
import type { AppServices } from '../../platform/services';
import { getOwnSession } from '../esign/read-sessions';
import type { Actor } from '../users/access-tokens';
import { Notification, type NotificationStatus } from './notification.entity';

const STATUSES: NotificationStatus[] = ['queued', 'sent', 'failed'];

/** The owner's outbox, newest first; `client_id` narrows it to one of their sessions (another's is `not_found`). */
export async function listOwnNotifications(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  args: { page: number; size: number; client_id?: string | null; status?: string | null },
): Promise<{ items: Notification[]; has_next: boolean }> {
  const { offset, limit } = checkPage(args);
  if (args.status != null && !STATUSES.includes(args.status as NotificationStatus)) {
    throw AppError.badRequest([{ field: 'status', problem: `must be one of ${STATUSES.join(', ')}` }]);
  }
  if (args.client_id != null) await getOwnSession(services, em, actor, args.client_id);
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
