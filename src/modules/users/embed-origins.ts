import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { AppError } from '../../platform/errors';
import { User } from './user.entity';

/** At most this many sites may frame an account's signing pages. */
export const MAX_EMBED_ORIGINS = 20;

/**
 * Replaces the origins allowed to frame the account's signing pages (docs/embedding.md): each exactly an origin
 * (`https://app.example.com`, a port if not the default; no path, no wildcard), `https`, or `http` on a loopback
 * host for local development. An empty list: no site may frame them (the default).
 */
export async function setEmbedOrigins(em: EntityManager, actor: Actor, origins: string[] | null | undefined): Promise<string[]> {
  if (!origins) throw AppError.missingFields(['origins']);
  const problems = origins.flatMap((origin, index) => {
    const problem = originProblem(origin);
    return problem ? [{ field: `origins[${index}]`, problem }] : [];
  });
  if (origins.length > MAX_EMBED_ORIGINS) problems.push({ field: 'origins', problem: `at most ${MAX_EMBED_ORIGINS} origins` });
  if (problems.length > 0) throw AppError.badRequest(problems);
  const unique = [...new Set(origins.map((origin) => new URL(origin).origin))];
  const user = await em.findOneOrFail(User, { id: actor.userId });
  user.embedOrigins = unique.length > 0 ? unique : null;
  await em.flush();
  return unique;
}

export async function embedOriginsOf(em: EntityManager, userId: string): Promise<string[]> {
  return (await em.findOne(User, { id: userId }, { fields: ['embedOrigins'] }))?.embedOrigins ?? [];
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function originProblem(origin: unknown): string | null {
  if (typeof origin !== 'string') return 'must be an origin such as https://app.example.com';
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return 'must be an origin such as https://app.example.com';
  }
  if (url.origin !== origin.replace(/\/$/, '')) return 'must be an origin only: scheme, host and port, no path';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return null;
  return 'must be https (http only on localhost or 127.0.0.1)';
}
