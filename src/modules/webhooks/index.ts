/**
 * webhooks: signed, retried, replayable events for REST integrators. Modules above record events in the
 * transactions of their changes; this module delivers them, in order per resource, and keeps the log.
 */
import type { ModuleManifest } from '../../platform/module';
import { webhookJobs } from './deliver-webhooks';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent } from './webhook.entities';
import { WebhooksResolver } from './webhooks.resolver';
import { webhookRestRoutes } from './webhooks.rest';

export { recordWebhookEvent, recordWebhookEvents, type NewWebhookEvent } from './record-event';
export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhook-events';

export const webhooksModule: ModuleManifest = {
  name: 'webhooks',
  entities: [WebhookEndpoint, WebhookEvent, WebhookDelivery, WebhookAttempt],
  resolvers: [WebhooksResolver],
  restRoutes: webhookRestRoutes,
  jobs: webhookJobs,
};
