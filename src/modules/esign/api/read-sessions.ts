import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../../platform/errors';
import { checkPage, pageOf } from '../../../platform/graphql/paging';
import type { AppServices } from '../../../platform/services';
import type { Actor } from '../../../platform/auth/actor';
import { EsignSession, type SessionStatus } from '../esign-session.entity';
import { expireDueSessions } from '../session/expire-sessions';
import { getOwnSession, SESSION_NOT_FOUND } from '../session/own-session';
import { readOwnSessionRecord, type SessionRecord } from './session-rows';

const STATUSES: SessionStatus[] = ['pending', 'completed', 'expired', 'cancelled', 'declined'];

/**
 * The owner's details read, without the ORM (session-rows.ts): it answers with the row as it is, unless the
 * session is due to expire, which goes the ORM's way (on an entity manager of its own) to be settled first.
 */
export async function readOwnSession(services: AppServices, actor: Actor, clientId: string): Promise<SessionRecord> {
  const record = await readOwnSessionRecord(services.orm, actor.userId, clientId);
  if (!record) throw new AppError('not_found', { message: SESSION_NOT_FOUND });
  if (record.status === 'pending' && record.expiresAt.getTime() <= Date.now()) {
    return getOwnSession(services, services.orm.em.fork(), actor, clientId);
  }
  return record;
}

export async function listOwnSessions(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  args: { page: number; size: number; status?: string | null; folder?: string | null },
): Promise<{ items: EsignSession[]; has_next: boolean }> {
  const { offset, limit } = checkPage(args);
  if (args.status != null && !STATUSES.includes(args.status as SessionStatus)) {
    throw AppError.badRequest([{ field: 'status', problem: `must be one of ${STATUSES.join(', ')}` }]);
  }
  // Due sessions are settled first, so that a status filter sees them as they are.
  const due = await em.find(
    EsignSession,
    { user: actor.userId, status: 'pending', expiresAt: { $lte: new Date() } },
    { fields: ['id'] },
  );
  if (due.length > 0) await expireDueSessions(services, em, { ids: due.map((session) => session.id) });
  const rows = await em.find(
    EsignSession,
    {
      user: actor.userId,
      ...(args.status ? { status: args.status as SessionStatus } : {}),
      ...(args.folder != null ? { folder: args.folder } : {}),
    },
    { orderBy: { createdAt: 'desc', seq: 'desc' }, offset, limit: limit + 1, refresh: true },
  );
  return pageOf(rows, limit);
}
