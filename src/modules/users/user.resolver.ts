import { Arg, Ctx, Field, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../platform/graphql/context';
import { TokenScope } from '../../platform/graphql/token-scope';
import { AppError } from '../../platform/errors';
import { User } from './user.entity';
import { embedOriginsOf, setEmbedOrigins } from './embed-origins';

@ObjectType('Me', { simpleResolvers: true, description: 'The user the access token belongs to.' })
export class MeType {
  @Field()
  user_id!: string;

  @Field()
  email!: string;

  @Field({ description: 'Identifier of the access token in use (for `tokens revoke`).' })
  token_id!: string;
}

@Resolver()
export class UserResolver {
  @TokenScope('any')
  @Query(() => MeType)
  async me(@Ctx() ctx: RequestContext): Promise<MeType> {
    const user = await ctx.em.findOne(User, { id: ctx.actor.userId });
    if (!user) throw new AppError('unauthorized');
    return { user_id: user.id, email: user.email, token_id: ctx.actor.tokenId };
  }

  @TokenScope('any')
  @Query(() => [String], { description: 'The origins allowed to frame your signing pages (docs/embedding.md).' })
  embedOrigins(@Ctx() ctx: RequestContext): Promise<string[]> {
    return embedOriginsOf(ctx.em, ctx.actor.userId);
  }

  @TokenScope('account')
  @Mutation(() => [String], {
    description: 'Replace the origins allowed to frame your signing pages: https origins (http on localhost); empty: none.',
  })
  setEmbedOrigins(
    @Arg('origins', () => [String], { nullable: true }) origins: string[] | null,
    @Ctx() ctx: RequestContext,
  ): Promise<string[]> {
    return setEmbedOrigins(ctx.em, ctx.actor, origins);
  }
}
