import type { RestRoute } from '../../platform/rest/route';

/** Added by this service (the contract describes no webhooks): see docs/webhooks.md. */
export const webhookRestRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/webhooks/create',
    operation: 'Mutation.createWebhook',
    summary: 'A new endpoint (`url`, `events`: types or `["*"]`, `description`); the answer holds its secret, once.',
  },
  { method: 'GET', path: '/webhooks/list', operation: 'Query.webhooks', summary: 'Your endpoints, newest first, paged.' },
  { method: 'GET', path: '/webhooks/details', operation: 'Query.webhook', summary: 'One endpoint (`endpoint_id`).' },
  {
    method: 'PUT',
    path: '/webhooks/update',
    operation: 'Mutation.updateWebhook',
    summary: 'Changes `url`, `events`, `enabled` or `description` of an endpoint (`endpoint_id`).',
  },
  {
    method: 'DELETE',
    path: '/webhooks/delete',
    operation: 'Mutation.deleteWebhook',
    summary: 'Deletes an endpoint (`endpoint_id`) with its deliveries.',
  },
  {
    method: 'POST',
    path: '/webhooks/rotate-secret',
    operation: 'Mutation.rotateWebhookSecret',
    summary: 'A new secret (in the answer, once); the previous one stays valid for 24 hours.',
  },
  {
    method: 'POST',
    path: '/webhooks/test',
    operation: 'Mutation.testWebhook',
    summary: 'Sends a `ping` to the endpoint now; answers the delivery with its first attempt.',
  },
  {
    method: 'GET',
    path: '/webhooks/deliveries',
    operation: 'Query.webhookDeliveries',
    summary: 'The delivery log of an endpoint (`endpoint_id`) or an event (`event_id`), newest first, paged.',
  },
  {
    method: 'POST',
    path: '/webhooks/redeliver',
    operation: 'Mutation.redeliverWebhooks',
    summary: 'Sends an event again (`event_id`), or every failed delivery of an endpoint since a time (`endpoint_id`, `since`).',
  },
];
