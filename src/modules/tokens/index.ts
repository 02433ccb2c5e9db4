/**
 * tokens: the access tokens an account manages itself over the API (create, list, rotate, revoke, each with scopes),
 * and browser tokens that read and follow one session or stamp order. The tokens themselves, and who a token is,
 * belong to users; this module sits above esign and stamps because a browser token names one of their resources.
 */
import type { ModuleManifest } from '../../platform/module';
import { TokenResolver } from './token.resolver';
import { tokenRestRoutes } from './tokens.rest';

export const tokensModule: ModuleManifest = { name: 'tokens', resolvers: [TokenResolver], restRoutes: tokenRestRoutes };
