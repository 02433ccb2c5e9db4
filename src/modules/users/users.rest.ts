import type { RestRoute } from '../../platform/rest/route';

export const userRestRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/account/embed-origins',
    operation: 'Query.embedOrigins',
    summary: 'The origins allowed to frame your signing pages (added by this service).',
  },
  {
    method: 'PUT',
    path: '/account/embed-origins',
    operation: 'Mutation.setEmbedOrigins',
    summary: 'Replace the origins allowed to frame your signing pages: `{origins}` (added by this service).',
  },
];
