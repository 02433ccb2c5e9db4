import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { AppError } from '../../platform/errors';
import { issueAccessToken } from './access-tokens';
import { User } from './user.entity';

const email = z.email().max(320);

/** Creates a user with a first access token; the token is returned here and never again. */
export async function createUser(
  em: EntityManager,
  input: { email: string },
): Promise<{ user_id: string; token: string; token_id: string }> {
  const parsed = email.safeParse(input.email?.trim().toLowerCase());
  if (!parsed.success) throw AppError.badRequest([{ field: 'email', problem: 'must be an email address' }]);
  if (await em.count(User, { email: parsed.data })) {
    throw new AppError('conflict', { message: `a user with email ${parsed.data} exists already` });
  }
  const user = em.create(User, { email: parsed.data });
  try {
    await em.persistAndFlush(user);
  } catch (error) {
    // Two creations of the same email at once: the unique index decides, the loser gets the same answer.
    if (error instanceof UniqueConstraintViolationException) {
      throw new AppError('conflict', { message: `a user with email ${parsed.data} exists already`, cause: error });
    }
    throw error;
  }
  const issued = await issueAccessToken(em, user.id, { label: 'created with the user' });
  return { user_id: user.id, token: issued.token, token_id: issued.token_id };
}
