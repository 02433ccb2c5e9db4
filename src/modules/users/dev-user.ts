import type { EntityManager } from '@mikro-orm/postgresql';
import { createUser } from './create-user';
import { User } from './user.entity';

export const DEV_USER_EMAIL = 'dev@sandbox.local';

/**
 * A sandbox with no user at all gets one, so that a fresh clone can be called right away.
 * Its token is returned once, for printing; it is never stored in clear or logged.
 */
export async function ensureDevUser(em: EntityManager): Promise<{ user_id: string; token: string } | null> {
  if ((await em.count(User, {})) > 0) return null;
  const created = await createUser(em, { email: DEV_USER_EMAIL });
  return { user_id: created.user_id, token: created.token };
}
