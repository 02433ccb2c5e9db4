import { Field, Int, ObjectType } from 'type-graphql';
import { PageOf } from '../../platform/graphql/page-type';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './webhook.entities';

@ObjectType('WebhookEndpoint', { simpleResolvers: true, description: 'Where events are POSTed (its secret is shown once).' })
export class WebhookEndpointType {
  @Field() endpoint_id!: string;
  @Field() url!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => [String], { description: 'Event types it receives; `["*"]`: every one.' }) events!: string[];
  @Field({ description: 'False once disabled, by its owner or after failing for the whole retry window.' }) enabled!: boolean;
  @Field(() => Date, { nullable: true }) disabled_at!: Date | null;
  @Field(() => String, { nullable: true }) disabled_reason!: string | null;
  @Field(() => Date, { nullable: true, description: 'Since when every delivery failed; null while it answers.' })
  failing_since!: Date | null;
  @Field(() => Date, {
    nullable: true,
    description: 'Until when the secret before the last rotation is still valid (and signed with).',
  })
  previous_secret_expires_at!: Date | null;
  @Field() created_at!: Date;
  @Field() updated_at!: Date;
}

@ObjectType('WebhookEndpointWithSecret', {
  simpleResolvers: true,
  description: 'An endpoint just made, or its secret just rotated: the secret is shown here once, and never again.',
})
export class WebhookEndpointWithSecretType extends WebhookEndpointType {
  @Field({ description: 'The signing secret (`whsec_...`): keep it; it is not shown again.' }) secret!: string;
}

@ObjectType('WebhookEndpointPage', { simpleResolvers: true })
export class WebhookEndpointPageType extends PageOf(WebhookEndpointType) {}

@ObjectType('WebhookAttempt', { simpleResolvers: true, description: 'One POST of a delivery.' })
export class WebhookAttemptType {
  @Field() attempt_id!: string;
  @Field() attempted_at!: Date;
  @Field(() => Int, { nullable: true, description: 'Null when there was no answer (see `error`).' }) status_code!: number | null;
  @Field(() => Int) duration_ms!: number;
  @Field(() => String, { nullable: true, description: 'At most 1 KB of the answer.' }) response_excerpt!: string | null;
  @Field(() => String, { nullable: true }) error!: string | null;
}

@ObjectType('WebhookDelivery', { simpleResolvers: true, description: 'One event on its way to one endpoint.' })
export class WebhookDeliveryType {
  @Field() delivery_id!: string;
  @Field() endpoint_id!: string;
  @Field() event_id!: string;
  @Field() event_type!: string;
  @Field({ description: 'The session, order, ledger entry or endpoint the event is about.' }) resource_id!: string;
  @Field({ description: '`pending` (being sent or waiting for a retry), `succeeded` or `failed` (given up).' })
  status!: string;
  @Field(() => Int) attempt_count!: number;
  @Field(() => Date, { nullable: true, description: 'When a pending delivery is tried next.' }) next_attempt_at!: Date | null;
  @Field(() => Int, { nullable: true }) last_status_code!: number | null;
  @Field(() => String, { nullable: true }) last_error!: string | null;
  @Field(() => Date, { nullable: true }) delivered_at!: Date | null;
  @Field() created_at!: Date;
  @Field(() => [WebhookAttemptType], { description: 'Every attempt, oldest first.' }) attempts!: WebhookAttemptType[];
}

@ObjectType('WebhookDeliveryPage', { simpleResolvers: true })
export class WebhookDeliveryPageType extends PageOf(WebhookDeliveryType) {}

@ObjectType('DeletedWebhookEndpoint', { simpleResolvers: true })
export class DeletedWebhookEndpointType {
  @Field() endpoint_id!: string;
  @Field() deleted!: boolean;
}

@ObjectType('WebhookRedelivery', { simpleResolvers: true })
export class WebhookRedeliveryType {
  @Field(() => Int, { description: 'Deliveries queued to be sent again.' }) queued!: number;
}

export function toEndpointView(endpoint: WebhookEndpoint): WebhookEndpointType {
  return {
    endpoint_id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description ?? null,
    events: endpoint.events,
    enabled: endpoint.enabled,
    disabled_at: endpoint.disabledAt ?? null,
    disabled_reason: endpoint.disabledReason ?? null,
    failing_since: endpoint.failingSince ?? null,
    previous_secret_expires_at: endpoint.previousSecretExpiresAt ?? null,
    created_at: endpoint.createdAt,
    updated_at: endpoint.updatedAt,
  };
}

export function toAttemptView(attempt: WebhookAttempt): WebhookAttemptType {
  return {
    attempt_id: attempt.id,
    attempted_at: attempt.attemptedAt,
    status_code: attempt.statusCode ?? null,
    duration_ms: attempt.durationMs,
    response_excerpt: attempt.responseExcerpt ?? null,
    error: attempt.error ?? null,
  };
}

export function toDeliveryView(delivery: WebhookDelivery, attempts: WebhookAttempt[]): WebhookDeliveryType {
  return {
    delivery_id: delivery.id,
    endpoint_id: delivery.endpoint.id,
    event_id: delivery.event.id,
    event_type: delivery.event.type,
    resource_id: delivery.resourceId,
    status: delivery.status,
    attempt_count: delivery.attempts,
    next_attempt_at: delivery.status === 'pending' ? delivery.nextAttemptAt : null,
    last_status_code: delivery.lastStatusCode ?? null,
    last_error: delivery.lastError ?? null,
    delivered_at: delivery.deliveredAt ?? null,
    created_at: delivery.createdAt,
    attempts: attempts.map(toAttemptView),
  };
}
