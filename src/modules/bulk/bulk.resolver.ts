import { GraphQLJSONObject } from 'graphql-scalars';
import { GraphQLUpload, type FileUpload } from 'graphql-upload-ts';
import { Arg, Args, ArgsType, Ctx, Field, Mutation, Query, Resolver, Root, Subscription, UseMiddleware } from 'type-graphql';
import { AppError } from '../../platform/errors';
import { refuseFailedUpload } from '../../platform/graphql/upload-argument';
import { ownedOrNotFound } from '../../platform/auth/ownership';
import { eventContext, type RequestContext } from '../../platform/graphql/context';
import { TokenScope } from '../../platform/graphql/token-scope';
import { PageArgs } from '../../platform/graphql/paging';
import { startingWith } from '../../platform/graphql/starting-point';
import { NotificationInput, SessionOptionsArgs } from '../esign';
import { bulkTopic } from './bulk-events';
import type { BulkOptions } from './bulk-rows';
import { Bulk } from './bulk.entity';
import { BulkPageType, BulkRowInput, BulkRowPageType, BulkType, toBulkRowView, toBulkView } from './bulk.types';
import { cancelBulk } from './cancel-bulk';
import { bulkCounts, bulkView, getOwnBulk, listOwnBulks, pageBulkRows } from './read-bulks';
import { startBulk, startCsvBulk } from './start-bulk';

@ArgsType()
export class BulkSendArgs extends SessionOptionsArgs {
  @Field(() => String, { nullable: true, description: 'The template every row is sent from.' })
  template_id?: string | null;

  @Field(() => [BulkRowInput], { nullable: true, description: 'The recipients, one session each: 1 to 10,000 rows.' })
  rows?: BulkRowInput[] | null;

  @Field(() => NotificationInput, {
    nullable: true,
    description:
      'The messages every signer of every row gets (invite, completion...), as a signer’s `notification`; none by default.',
  })
  notification?: NotificationInput | null;
}

@ArgsType()
class BulkRowsArgs extends PageArgs {
  @Field(() => String, { nullable: true })
  client_id?: string | null;

  @Field(() => String, { nullable: true, description: '`queued`, `created`, `failed` or `skipped`: only those rows.' })
  status?: string | null;
}

/** An upload part that failed before its rows could be read. */
function csvUploadRefusal(error: unknown): AppError {
  return new AppError('bad_request', { errors: [{ field: 'file', problem: 'the upload could not be read' }], cause: error });
}

@Resolver(() => BulkType)
export class BulkResolver {
  @TokenScope('sessions')
  @Mutation(() => BulkType, {
    description: 'Send a template to many recipients, one session per row, made by a job; answers at once (added).',
  })
  async bulkSend(@Args() args: BulkSendArgs, @Ctx() ctx: RequestContext): Promise<BulkType> {
    const { template_id: templateId, rows, ...options } = args;
    const bulk = await startBulk(
      ctx.services,
      ctx.em,
      ctx.actor,
      { template_id: templateId, options: options as BulkOptions },
      rows ?? [],
    );
    return bulkView(ctx.em, bulk);
  }

  @TokenScope('sessions')
  @Mutation(() => BulkType, {
    description:
      'A bulk send from a CSV upload (docs/bulk.md for its columns): as bulkSend, the rows read as they stream (added).',
  })
  @UseMiddleware(refuseFailedUpload(csvUploadRefusal))
  async bulkSendCsv(
    @Arg('template_id', () => String, { nullable: true }) templateId: string | null,
    @Arg('file', () => GraphQLUpload) file: Promise<FileUpload>,
    @Arg('options', () => GraphQLJSONObject, { nullable: true, description: 'The session options every row gets.' })
    options: Record<string, unknown> | null,
    @Ctx() ctx: RequestContext,
  ): Promise<BulkType> {
    let stream;
    try {
      stream = (await file).createReadStream();
    } catch (error) {
      throw csvUploadRefusal(error);
    }
    const request = { template_id: templateId, options: (options ?? {}) as BulkOptions };
    return bulkView(ctx.em, await startCsvBulk(ctx.services, ctx.em, ctx.actor, request, stream));
  }

  @TokenScope('sessions')
  @Query(() => BulkType, { description: 'One of your bulks: its rows and the sessions it made, by state (added).' })
  async bulk(@Arg('client_id', () => String, { nullable: true }) clientId: string | null, @Ctx() ctx: RequestContext) {
    return bulkView(ctx.em, await getOwnBulk(ctx.em, ctx.actor, clientId));
  }

  @TokenScope('sessions')
  @Query(() => BulkPageType, { description: 'Your bulks, newest first (added).' })
  async bulks(@Args() args: PageArgs, @Ctx() ctx: RequestContext): Promise<BulkPageType> {
    const page = await listOwnBulks(ctx.em, ctx.actor, args);
    const counts = await bulkCounts(
      ctx.em,
      page.items.map((bulk) => bulk.id),
    );
    return { items: page.items.map((bulk) => toBulkView(bulk, counts.get(bulk.id)!)), has_next: page.has_next };
  }

  @TokenScope('sessions')
  @Query(() => BulkRowPageType, { description: 'A page of a bulk’s rows, in order, with the session or error of each (added).' })
  async bulkRows(@Args() args: BulkRowsArgs, @Ctx() ctx: RequestContext): Promise<BulkRowPageType> {
    const page = await pageBulkRows(ctx.em, ctx.actor, args);
    return { client_id: page.bulk.id, items: page.items.map(toBulkRowView), has_next: page.has_next };
  }

  @TokenScope('sessions')
  @Mutation(() => BulkType, {
    description: 'Cancel a bulk: rows not yet made are skipped, the sessions made are cancelled (added).',
  })
  async cancelBulk(@Arg('client_id', () => String, { nullable: true }) clientId: string | null, @Ctx() ctx: RequestContext) {
    return bulkView(ctx.em, await cancelBulk(ctx.services, ctx.em, ctx.actor, clientId));
  }

  @TokenScope('sessions')
  @Subscription(() => BulkType, {
    description: 'The bulk as it reads now, at once, then as its rows are made, as it then reads (added).',
    subscribe: async ({ args, context }) => {
      const ctx = context as RequestContext;
      const clientId = args.client_id as string;
      await getOwnBulk(ctx.em, ctx.actor, clientId);
      const { start, live } = ctx.services.events.follow(bulkTopic(clientId), () => ({ client_id: clientId }));
      return startingWith(start, live);
    },
  })
  async bulkUpdated(
    @Arg('client_id') clientId: string,
    @Root() event: { client_id: string },
    @Ctx() ctx: RequestContext,
  ): Promise<BulkType> {
    // A subscription outlives many events: each is read afresh.
    Object.assign(ctx, eventContext(ctx.services, ctx.actor, event));
    const bulk = event.client_id === clientId ? await ctx.em.findOne(Bulk, { id: clientId }) : null;
    return bulkView(ctx.em, ownedOrNotFound(ctx.actor, bulk));
  }
}
