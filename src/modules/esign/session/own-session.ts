import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import type { Actor } from '../../../platform/auth/actor';
import { EsignSession } from '../esign-session.entity';
import { expireDueSessions } from './expire-sessions';

export const SESSION_NOT_FOUND = 'Esign client with the given client_id not found';

/** What an unknown or foreign session answers. */
export const sessionNotFound = () => new AppError('not_found', { message: SESSION_NOT_FOUND });

/** A read never shows a session pending after its expiry, even before the expiry job has run. */
async function settleExpiry(services: AppServices, em: EntityManager, sessions: EsignSession[]): Promise<void> {
  const now = Date.now();
  const due = sessions.filter((session) => session.status === 'pending' && session.expiresAt.getTime() <= now);
  if (due.length === 0) return;
  await expireDueSessions(services, em, { ids: due.map((session) => session.id) });
  for (const session of due) await em.refresh(session);
}

/** The caller's session by its client_id (404 otherwise), its expiry settled first. */
export async function getOwnSession(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  clientId: string,
  notFoundMessage = SESSION_NOT_FOUND,
): Promise<EsignSession> {
  const session = await em.findOne(EsignSession, { id: clientId, user: actor.userId });
  if (!session) throw new AppError('not_found', { message: notFoundMessage });
  await settleExpiry(services, em, [session]);
  return session;
}
