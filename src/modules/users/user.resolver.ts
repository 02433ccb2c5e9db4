import { Ctx, Field, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../platform/graphql/context';
import { TokenScope } from '../../platform/graphql/token-scope';
import { AppError } from '../../platform/errors';
import { User } from './user.entity';

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
}
