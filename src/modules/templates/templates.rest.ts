import type { RestRoute } from '../../platform/rest/route';

export const templateRestRoutes: RestRoute[] = [
  { method: 'POST', path: '/templates/save', operation: 'Mutation.saveTemplate', summary: 'Save a template.' },
  { method: 'PUT', path: '/templates/update', operation: 'Mutation.updateTemplate', summary: 'Update a template.' },
  {
    method: 'GET',
    path: '/templates/details',
    operation: 'Query.template',
    summary: 'Read a template (added by this service: the contract leaves template reads unshown).',
  },
  {
    method: 'GET',
    path: '/templates/list',
    operation: 'Query.templates',
    summary: 'Your templates, newest first, `page` from 1, `size` 1 to 100, optional `folder` (added by this service).',
  },
  {
    method: 'DELETE',
    path: '/templates/delete',
    operation: 'Mutation.deleteTemplate',
    summary: 'Delete a template; started sessions keep working (added by this service).',
  },
  {
    method: 'POST',
    path: '/esign/initialize-from-template',
    operation: 'Mutation.initializeFromTemplate',
    summary: 'Start an Esign session from a template.',
  },
];
