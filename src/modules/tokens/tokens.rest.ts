import type { RestRoute } from '../../platform/rest/route';

export const tokenRestRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/tokens/create',
    operation: 'Mutation.createToken',
    summary:
      'Make an access token of your account: `{name, scopes, expires_in}`; `token` is its secret, shown once (added by this service).',
  },
  {
    method: 'GET',
    path: '/tokens/list',
    operation: 'Query.tokens',
    summary: 'Your access tokens, newest first, never their secrets (added by this service).',
  },
  {
    method: 'POST',
    path: '/tokens/rotate',
    operation: 'Mutation.rotateToken',
    summary: 'A new secret for a token: `{client_id, grace_seconds}` (added by this service).',
  },
  {
    method: 'POST',
    path: '/tokens/revoke',
    operation: 'Mutation.revokeToken',
    summary: 'Revoke a token: `{client_id}` (added by this service).',
  },
  {
    method: 'POST',
    path: '/tokens/browser',
    operation: 'Mutation.createBrowserToken',
    summary:
      'A browser token for one session or stamp order: `{resource_id, expires_in}`, at most an hour (added by this service).',
  },
];
