import type { RestRoute } from '../../platform/rest/route';

export const directLinkRestRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/templates/direct-link',
    operation: 'Mutation.setDirectLink',
    summary:
      'Turn a template’s public signing link on or off: `{template_id, enabled, expires_at, max_uses, ...}` (added by this service).',
  },
  {
    method: 'GET',
    path: '/templates/direct-link',
    operation: 'Query.directLink',
    summary: 'A template’s public signing link (added by this service).',
  },
];
