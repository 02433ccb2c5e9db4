import { Args, ArgsType, Ctx, Field, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../platform/graphql/context';
import { TokenScope } from '../../../platform/graphql/token-scope';
import { PageArgs } from '../../../platform/graphql/paging';
import {
  listOwnNotifications,
  NotificationMessagePageType,
  NotificationMessageType,
  toNotificationView,
} from '../../notifications';
import { getOwnSession } from '../session/own-session';

@ArgsType()
class NotificationListArgs extends PageArgs {
  @Field(() => String, { nullable: true, description: 'Only this session’s messages.' })
  client_id?: string | null;

  @Field(() => String, { nullable: true, description: '`queued`, `sent` or `failed`.' })
  status?: string | null;
}

/** GraphQL only: no REST route serves it (the REST face exposes the documented routes alone). */
@Resolver(() => NotificationMessageType)
export class NotificationResolver {
  @TokenScope('sessions')
  @Query(() => NotificationMessagePageType, { description: 'Your outbox: every message sent for your sessions, newest first.' })
  async notifications(@Args() args: NotificationListArgs, @Ctx() ctx: RequestContext): Promise<NotificationMessagePageType> {
    if (args.client_id != null) await getOwnSession(ctx.services, ctx.em, ctx.actor, args.client_id);
    const page = await listOwnNotifications(ctx.em, ctx.actor, args);
    const env = ctx.services.config.env;
    return { items: page.items.map((row) => toNotificationView(row, env)), has_next: page.has_next };
  }
}
