import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import { ownedOrNull } from '../../../platform/auth/ownership';
import type { RequestContext } from '../../../platform/graphql/context';
import { GraphQLOnly } from '../../../platform/graphql/graphql-only';
import { StampInstanceType } from '../../stamps';
import { EsignSessionType, toSessionView } from './session.types';

/** A stamp's session: declared here, above stamps, so that the stamps module never reads sessions. */
@Resolver(() => StampInstanceType)
export class StampSessionResolver {
  @FieldResolver(() => EsignSessionType, {
    nullable: true,
    description: 'The session holding (reserved) or having used the stamp.',
  })
  @GraphQLOnly()
  async session(@Root() instance: StampInstanceType, @Ctx() ctx: RequestContext): Promise<EsignSessionType | null> {
    if (!instance.session_id) return null;
    const session = await ctx.loaders.sessionById.load(instance.session_id);
    const own = ownedOrNull(ctx.actor, session);
    return own && toSessionView(own);
  }
}
