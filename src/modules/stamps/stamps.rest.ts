import type { RestRoute } from '../../platform/rest/route';

export const stampRestRoutes: RestRoute[] = [
  { method: 'GET', path: '/stamps/states', operation: 'Query.stampStates', summary: 'State codes supported for procurement.' },
  { method: 'GET', path: '/stamps/articles', operation: 'Query.stampArticles', summary: 'Articles of a state (`state_code`).' },
  {
    method: 'POST',
    path: '/stamps/create-order',
    operation: 'Mutation.createStampOrder',
    summary: 'Order stamps (billed to the wallet unless `mock`); an `Idempotency-Key` header makes retries safe.',
  },
  {
    method: 'GET',
    path: '/stamps/order-status',
    operation: 'Query.stampOrder',
    summary: 'An order with status counts and stamps.',
  },
  {
    method: 'GET',
    path: '/stamps/list',
    operation: 'Query.stampOrders',
    summary:
      'Your orders, newest first; `page` from 1, `size` 1 to 100; filters `client_id`, `state_code`, `article_id` (needs `state_code`), `status`.',
  },
  {
    method: 'GET',
    path: '/stamps/download-pdf',
    operation: 'Query.stampPdf',
    summary: 'A short-lived URL of one stamp’s certificate (`client_id` = `stamp_inst_...`).',
  },
  {
    method: 'GET',
    path: '/stamps/instance',
    operation: 'Query.stampInstance',
    summary:
      'One stamp instance (`client_id` = `stamp_inst_...`) with its certificate facts and its history, oldest step first (added by this service).',
  },
];
