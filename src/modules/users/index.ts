/**
 * users: accounts and their access tokens. It answers the platform's "who is this token?" (TokenVerifier)
 * and makes the sandbox's development user.
 */
import type { ModuleManifest } from '../../platform/module';
import { AccessToken } from './access-token.entity';
import { User } from './user.entity';
import { UserResolver } from './user.resolver';
import { userRestRoutes } from './users.rest';

export { accessTokenVerifier, issueAccessToken, revokeAccessToken, CLI_TOKEN_KINDS, type IssuedToken } from './access-tokens';
export { AccessToken, type TokenScope } from './access-token.entity';
export { createUser } from './create-user';
export { DEV_USER_EMAIL, ensureDevUser } from './dev-user';
export { setStampFee, stampFeeOf } from './stamp-fee';
export { unknownUser } from './unknown-user';
export { User } from './user.entity';
export { embedOriginsOf } from './embed-origins';

export const usersModule: ModuleManifest = {
  name: 'users',
  entities: [User, AccessToken],
  resolvers: [UserResolver],
  restRoutes: userRestRoutes,
};
