import {
  Arg,
  Args,
  ArgsType,
  Ctx,
  Field,
  FieldResolver,
  Float,
  Int,
  Mutation,
  Query,
  Resolver,
  Root,
  Subscription,
} from 'type-graphql';
import { ownedOrNotFound, ownedOrNull } from '../../platform/auth/ownership';
import { eventContext, type RequestContext } from '../../platform/graphql/context';
import { BrowserReadable, TokenScope } from '../../platform/graphql/token-scope';
import { startingWith } from '../../platform/graphql/starting-point';
import { GraphQLOnly } from '../../platform/graphql/graphql-only';
import { NestedPageArgs, RequiredPageArgs, windowOf } from '../../platform/graphql/paging';
import { MaxItems } from '../../platform/graphql/operation-limits';
import { formatRupees } from '../../platform/money';
import { FileInfoType, toFileInfo } from '../files';
import { ORDER_LIMITS, createOrder, type CreateOrderInput } from './create-order';
import { orderTopic } from './order-events';
import { netChargedPaise, orderStatusOf } from './order-status';
import {
  checkOwnOrder,
  downloadStampPdf,
  getOwnInstance,
  getOwnOrder,
  listArticles,
  listOwnOrders,
  listStates,
  orderNotFound,
} from './read-stamps';
import {
  CreatedStampOrderType,
  StampArticleType,
  StampDownloadType,
  StampInstanceDetailsType,
  StampInstanceType,
  StampOrderPageType,
  StampOrderType,
  StampStateType,
  StatusCountsType,
  chargedAmount,
  toOrderView,
  toStampDetailsView,
  toStampView,
} from './stamp.types';

@ArgsType()
class CreateOrderArgs implements CreateOrderInput {
  @Field(() => String, { nullable: true }) state_code?: string | null;
  @Field(() => String, { nullable: true }) first_party_name?: string | null;
  @Field(() => String, { nullable: true }) second_party_name?: string | null;
  @Field(() => String, { nullable: true }) article_id?: string | null;

  @Field(() => Float, { nullable: true, description: 'Duty per stamp: whole rupees, 1 to 1,000,000.' })
  stamp_duty_amount?: number | null;

  @Field(() => Float, { nullable: true, description: 'Rupees, greater than 0.' })
  consideration_amount?: number | null;

  @Field(() => Int, { nullable: true, description: '1 to 5000.' })
  quantity?: number | null;

  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true }) first_party_address?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Route to the mock vendor; not billed.' })
  mock?: boolean | null;

  @Field(() => String, {
    nullable: true,
    description: 'GraphQL clients give it here; REST clients send the Idempotency-Key header.',
  })
  idempotency_key?: string | null;
}

@ArgsType()
class OrderListArgs extends RequiredPageArgs {
  @Field(() => String, { nullable: true }) client_id?: string | null;
  @Field(() => String, { nullable: true }) state_code?: string | null;
  @Field(() => String, { nullable: true, description: 'Requires state_code.' }) article_id?: string | null;
  @Field(() => String, { nullable: true }) status?: string | null;
}

@Resolver(() => CreatedStampOrderType)
export class StampOrderResolver {
  @TokenScope('stamps')
  @Query(() => [StampStateType], { description: 'States where stamps can be procured.' })
  async stampStates(@Ctx() ctx: RequestContext): Promise<StampStateType[]> {
    return (await listStates(ctx.em)).map((state) => ({ state_code: state.code, name: state.name }));
  }

  @TokenScope('stamps')
  @Query(() => [StampArticleType], { description: 'Articles of a state’s stamp act schedule.' })
  async stampArticles(
    @Arg('state_code', () => String, { nullable: true }) stateCode: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<StampArticleType[]> {
    return (await listArticles(ctx.em, stateCode)).map((a) => ({ article_id: a.id, name: a.name, description: a.description }));
  }

  @TokenScope('stamps')
  @Mutation(() => CreatedStampOrderType, { description: 'Order stamps; procurement runs in the background.' })
  async createStampOrder(@Args() args: CreateOrderArgs, @Ctx() ctx: RequestContext): Promise<CreatedStampOrderType> {
    const key = args.idempotency_key ?? ctx.idempotencyKey;
    return toOrderView(await createOrder(ctx.services, ctx.em, ctx.actor, args, key ?? undefined));
  }

  @TokenScope('stamps')
  @BrowserReadable(orderNotFound)
  @Query(() => StampOrderType, { description: 'An order with its status counts and procured stamps.' })
  async stampOrder(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<StampOrderType> {
    return toOrderView(await getOwnOrder(ctx.em, ctx.actor, clientId));
  }

  @TokenScope('stamps')
  @Query(() => StampOrderPageType, { description: 'Your orders, newest first.' })
  async stampOrders(@Args() args: OrderListArgs, @Ctx() ctx: RequestContext): Promise<StampOrderPageType> {
    const page = await listOwnOrders(ctx.em, ctx.actor, args);
    return { items: page.items.map((order) => toOrderView(order, args.status ?? null)), has_next: page.has_next };
  }

  @TokenScope('stamps')
  @Query(() => StampDownloadType, { description: 'A short-lived link to one stamp’s certificate PDF.' })
  stampPdf(
    @Arg('client_id', () => String, { nullable: true }) clientId: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<StampDownloadType> {
    return downloadStampPdf(ctx.services, ctx.em, ctx.actor, clientId);
  }

  @TokenScope('stamps')
  @Query(() => StampInstanceDetailsType, { description: 'One of your stamp instances with its history.' })
  async stampInstance(
    @Arg('client_id', () => String, { nullable: true }) clientId: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<StampInstanceDetailsType> {
    const { instance, history } = await getOwnInstance(ctx.em, ctx.actor, clientId);
    return toStampDetailsView(instance, history);
  }

  @TokenScope('stamps')
  @BrowserReadable(orderNotFound)
  @Subscription(() => StampOrderType, {
    description: 'The order as it reads now, at once, then whenever procurement moves it.',
    subscribe: async ({ args, context }) => {
      const ctx = context as RequestContext;
      const clientId = args.client_id as string;
      await checkOwnOrder(ctx.services.orm, ctx.actor, clientId);
      // The topic is the order's own id, checked above; each event is checked again as it is read. Listening
      // starts before the current state is read, so a change between the two is not lost; after the bus lost its
      // connection, the resource is read again (what was published meanwhile never arrives). Followers that come
      // together share one starting read (EventBus.follow).
      const { start, live } = ctx.services.events.follow(orderTopic(clientId), () => ({ client_id: clientId }));
      return startingWith(start, live);
    },
  })
  async stampOrderUpdated(
    @Arg('client_id') clientId: string,
    @Root() event: Record<string, unknown>,
    @Ctx() ctx: RequestContext,
  ): Promise<StampOrderType> {
    // Each event is read afresh (a subscription lives long), with one read shared by its subscribers.
    Object.assign(ctx, eventContext(ctx.services, ctx.actor, event));
    const order = await ctx.loaders.orderById.load(clientId);
    return toOrderView(ownedOrNotFound(ctx.actor, order));
  }

  /**
   * The contract's order-status lists every procured stamp (REST's schema drops nested arguments, so it always
   * does); GraphQL clients page an order of up to 5000 stamps with `page` and `size`, which the operation cost
   * counts (without them, the list counts as 5000).
   */
  @FieldResolver(() => [StampInstanceType])
  @MaxItems(ORDER_LIMITS.quantity.max)
  async stamps(
    @Root() order: CreatedStampOrderType,
    @Args() paging: NestedPageArgs,
    @Ctx() ctx: RequestContext,
  ): Promise<StampInstanceType[]> {
    const status = order.stamps_status ?? '';
    if (paging.page == null && paging.size == null) {
      return (await ctx.loaders.stampsByOrder.load(`${order.client_id}|${status}`)).map(toStampView);
    }
    const { offset, limit } = windowOf(paging, ORDER_LIMITS.quantity.max);
    return (await ctx.loaders.stampPageByOrder.load(`${order.client_id}|${status}|${offset}|${limit}`)).map(toStampView);
  }

  @FieldResolver(() => String, { description: 'What the wallet was charged for the order, in rupees (0.00 for mock).' })
  @GraphQLOnly()
  charged_amount(@Root() order: CreatedStampOrderType): string {
    return chargedAmount(order);
  }
}

@Resolver(() => StampOrderType)
export class StampOrderCountsResolver {
  @FieldResolver(() => StatusCountsType)
  status_counts(@Root() order: StampOrderType, @Ctx() ctx: RequestContext): Promise<StatusCountsType> {
    return ctx.loaders.statusCountsByOrder.load(order.client_id);
  }

  /** Derived from the same counts as `status_counts` (one statement for both, per request). */
  @FieldResolver(() => String, {
    description:
      'The order as a whole (added): `pending` (no stamp settled yet), `processing` (some settled, some pending), then `completed` (every stamp issued), `partially_failed` (some refused) or `failed` (every stamp refused).',
  })
  async status(@Root() order: StampOrderType, @Ctx() ctx: RequestContext): Promise<string> {
    return orderStatusOf(await ctx.loaders.statusCountsByOrder.load(order.client_id));
  }

  @FieldResolver(() => String, {
    description:
      'What the order costs the wallet after refunds (added): the charge less duty and fee of each refused stamp, in rupees as `charged_amount` ("0.00" for mock).',
  })
  async net_charged_amount(@Root() order: StampOrderType, @Ctx() ctx: RequestContext): Promise<string> {
    return formatRupees(netChargedPaise(order, await ctx.loaders.statusCountsByOrder.load(order.client_id)));
  }
}

@Resolver(() => StampInstanceType)
export class StampInstanceResolver {
  @FieldResolver(() => String, { nullable: true })
  @GraphQLOnly()
  certificate_number(@Root() instance: StampInstanceType): string | null {
    return instance.certificate.number;
  }

  @FieldResolver(() => Date, { nullable: true })
  @GraphQLOnly()
  issued_at(@Root() instance: StampInstanceType): Date | null {
    return instance.certificate.issued_at;
  }

  @FieldResolver(() => String, { nullable: true })
  @GraphQLOnly()
  rejected_reason(@Root() instance: StampInstanceType): string | null {
    return instance.certificate.rejected_reason;
  }

  @FieldResolver(() => FileInfoType, { nullable: true, description: 'The certificate PDF.' })
  @GraphQLOnly()
  async pdf_file(@Root() instance: StampInstanceType, @Ctx() ctx: RequestContext): Promise<FileInfoType | null> {
    if (!instance.pdf_file_id) return null;
    const file = await ctx.loaders.fileById.load(instance.pdf_file_id);
    const own = ownedOrNull(ctx.actor, file);
    return own && toFileInfo(own);
  }

  @FieldResolver(() => StampOrderType, { description: 'The order the stamp belongs to.' })
  @GraphQLOnly()
  async order(@Root() instance: StampInstanceType, @Ctx() ctx: RequestContext): Promise<StampOrderType> {
    const order = await ctx.loaders.orderById.load(instance.order_id);
    return toOrderView(ownedOrNotFound(ctx.actor, order));
  }
}
