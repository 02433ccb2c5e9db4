import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { generateAccessToken, hashToken } from '../../platform/auth/bearer';
import { scopesNeeded, type FieldDomain } from '../../platform/auth/token-scopes';
import { AppError } from '../../platform/errors';
import { Problems, isAbsent, wholeNumber } from '../../platform/validation/problems';
import type { AppServices } from '../../platform/services';
import { getOwnSession } from '../esign';
import { getOwnOrder } from '../stamps';
import { AccessToken, User } from '../users';
import type { TokenView } from './manage-tokens';

/** A browser token lives at most an hour (15 minutes unless asked otherwise). */
export const BROWSER_TOKEN_SECONDS = { min: 60, max: 3600, default: 900 } as const;

/** What a browser token may follow, by the prefix of its id, and the scope that reads it. */
const RESOURCES: {
  prefix: string;
  what: string;
  domain: FieldDomain;
  owns: (services: AppServices, em: EntityManager, actor: Actor, id: string) => Promise<unknown>;
}[] = [
  {
    prefix: 'esign_',
    what: 'a session',
    domain: 'sessions',
    owns: (services, em, actor, id) => getOwnSession(services, em, actor, id),
  },
  { prefix: 'stamp_', what: 'a stamp order', domain: 'stamps', owns: (_services, em, actor, id) => getOwnOrder(em, actor, id) },
];

/**
 * Mints a short-lived token for a browser, limited to reading and following one of the account's sessions or stamp
 * orders (docs/tokens.md): the integrator's server calls this and hands the browser the token, never its own. The
 * caller's token must be able to read the resource itself; another user's resource is 404, as everywhere.
 */
export async function createBrowserToken(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  request: { resource_id?: string | null; expires_in?: number | null },
): Promise<TokenView> {
  const problems = new Problems();
  const expiresIn =
    wholeNumber(problems, 'expires_in', request.expires_in, BROWSER_TOKEN_SECONDS) ?? BROWSER_TOKEN_SECONDS.default;
  if (isAbsent(request.resource_id)) problems.missingField('resource_id');
  const error = problems.toError();
  if (error) throw error;
  const resourceId = request.resource_id!;
  const resource = RESOURCES.find(
    (candidate) => resourceId.startsWith(candidate.prefix) && !resourceId.startsWith('stamp_inst_'),
  );
  if (!resource)
    throw AppError.badRequest([{ field: 'resource_id', problem: 'must be a session (esign_...) or a stamp order (stamp_...)' }]);
  const needed = scopesNeeded(actor.scopes, resource.domain, 'query');
  if (needed)
    throw new AppError('forbidden', {
      errors: [
        {
          field: 'scope',
          problem: `following ${resource.what} needs a token with scope ${needed.join(' or ')}; this token has ${actor.scopes!.join(', ')}`,
        },
      ],
    });
  await resource.owns(services, em, actor, resourceId);
  const secret = generateAccessToken();
  const token = em.create(AccessToken, {
    user: em.getReference(User, actor.userId),
    tokenHash: hashToken(secret),
    label: 'browser',
    scope: 'browser',
    resourceId,
    expiresAt: new Date(Date.now() + expiresIn * 1000),
  });
  await em.flush();
  return { token, secret };
}
