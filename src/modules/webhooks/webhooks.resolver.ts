import { Arg, Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../platform/graphql/context';
import { TokenScope } from '../../platform/graphql/token-scope';
import { PageArgs } from '../../platform/graphql/paging';
import {
  createEndpoint,
  deleteEndpoint,
  getOwnEndpoint,
  listDeliveries,
  listOwnEndpoints,
  redeliver,
  rotateSecret,
  sendTestEvent,
  updateEndpoint,
} from './manage-webhooks';
import {
  DeletedWebhookEndpointType,
  toDeliveryView,
  toEndpointView,
  WebhookDeliveryPageType,
  WebhookDeliveryType,
  WebhookEndpointPageType,
  WebhookEndpointType,
  WebhookEndpointWithSecretType,
  WebhookRedeliveryType,
} from './webhooks.types';

@Resolver()
export class WebhooksResolver {
  @TokenScope('webhooks')
  @Mutation(() => WebhookEndpointWithSecretType, {
    description: 'A new webhook endpoint for events of yours; its signing secret is in the answer, once.',
  })
  async createWebhook(
    @Arg('url') url: string,
    @Arg('events', () => [String], { description: 'Event types, or `["*"]` for every one.' }) events: string[],
    @Arg('description', () => String, { nullable: true }) description: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<WebhookEndpointWithSecretType> {
    const { endpoint, secret } = await createEndpoint(ctx.services, ctx.em, ctx.actor, { url, events, description });
    return { ...toEndpointView(endpoint), secret };
  }

  @TokenScope('webhooks')
  @Query(() => WebhookEndpointPageType, { description: 'Your webhook endpoints, newest first.' })
  async webhooks(@Args() page: PageArgs, @Ctx() ctx: RequestContext): Promise<WebhookEndpointPageType> {
    const found = await listOwnEndpoints(ctx.em, ctx.actor, page);
    return { items: found.items.map(toEndpointView), has_next: found.has_next };
  }

  @TokenScope('webhooks')
  @Query(() => WebhookEndpointType, { description: 'One of your webhook endpoints.' })
  async webhook(@Arg('endpoint_id') endpointId: string, @Ctx() ctx: RequestContext): Promise<WebhookEndpointType> {
    return toEndpointView(await getOwnEndpoint(ctx.em, ctx.actor, endpointId));
  }

  @TokenScope('webhooks')
  @Mutation(() => WebhookEndpointType, { description: 'Changes an endpoint: what is given changes, the rest stays.' })
  async updateWebhook(
    @Arg('endpoint_id') endpointId: string,
    @Arg('url', () => String, { nullable: true }) url: string | null,
    @Arg('events', () => [String], { nullable: true }) events: string[] | null,
    @Arg('enabled', () => Boolean, { nullable: true }) enabled: boolean | null,
    @Arg('description', () => String, { nullable: true }) description: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<WebhookEndpointType> {
    return toEndpointView(
      await updateEndpoint(ctx.services, ctx.em, ctx.actor, endpointId, {
        url,
        events,
        enabled,
        ...(description === null ? {} : { description }),
      }),
    );
  }

  @TokenScope('webhooks')
  @Mutation(() => DeletedWebhookEndpointType, { description: 'Deletes an endpoint with its deliveries.' })
  async deleteWebhook(@Arg('endpoint_id') endpointId: string, @Ctx() ctx: RequestContext): Promise<DeletedWebhookEndpointType> {
    return { endpoint_id: await deleteEndpoint(ctx.em, ctx.actor, endpointId), deleted: true };
  }

  @TokenScope('webhooks')
  @Mutation(() => WebhookEndpointWithSecretType, {
    description: 'A new signing secret (in the answer, once); the previous one stays valid for 24 hours.',
  })
  async rotateWebhookSecret(
    @Arg('endpoint_id') endpointId: string,
    @Ctx() ctx: RequestContext,
  ): Promise<WebhookEndpointWithSecretType> {
    const { endpoint, secret } = await rotateSecret(ctx.services, ctx.em, ctx.actor, endpointId);
    return { ...toEndpointView(endpoint), secret };
  }

  @TokenScope('webhooks')
  @Mutation(() => WebhookDeliveryType, { description: 'Sends a `ping` event to the endpoint now; answers its delivery.' })
  async testWebhook(@Arg('endpoint_id') endpointId: string, @Ctx() ctx: RequestContext): Promise<WebhookDeliveryType> {
    const delivery = await sendTestEvent(ctx.services, ctx.em, ctx.actor, endpointId);
    const { attempts } = await listDeliveries(ctx.em.fork(), ctx.actor, { event_id: delivery.event.id }, { page: 1, size: 1 });
    return toDeliveryView(delivery, attempts.get(delivery.id) ?? []);
  }

  @TokenScope('webhooks')
  @Query(() => WebhookDeliveryPageType, {
    description: 'The delivery log of one of your endpoints or events, newest first, each delivery with its attempts.',
  })
  async webhookDeliveries(
    @Arg('endpoint_id', () => String, { nullable: true }) endpointId: string | null,
    @Arg('event_id', () => String, { nullable: true }) eventId: string | null,
    @Args() page: PageArgs,
    @Ctx() ctx: RequestContext,
  ): Promise<WebhookDeliveryPageType> {
    const found = await listDeliveries(ctx.em, ctx.actor, { endpoint_id: endpointId, event_id: eventId }, page);
    return {
      items: found.items.map((delivery) => toDeliveryView(delivery, found.attempts.get(delivery.id) ?? [])),
      has_next: found.has_next,
    };
  }

  @TokenScope('webhooks')
  @Mutation(() => WebhookRedeliveryType, {
    description:
      'Sends one event again (`event_id`, optionally to one endpoint), or every failed delivery of an endpoint since a time (`endpoint_id`, `since`).',
  })
  async redeliverWebhooks(
    @Arg('event_id', () => String, { nullable: true }) eventId: string | null,
    @Arg('endpoint_id', () => String, { nullable: true }) endpointId: string | null,
    @Arg('since', () => Date, { nullable: true }) since: Date | null,
    @Ctx() ctx: RequestContext,
  ): Promise<WebhookRedeliveryType> {
    return {
      queued: await redeliver(ctx.services, ctx.em, ctx.actor, { event_id: eventId, endpoint_id: endpointId, since }),
    };
  }
}
