import { Arg, Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../platform/graphql/context';
import { TokenScope } from '../../platform/graphql/token-scope';
import { DirectLinkType, SetDirectLinkArgs, toDirectLinkView } from './direct-link.types';
import { getDirectLink, setDirectLink } from './manage-direct-links';

@Resolver()
export class DirectLinkResolver {
  @TokenScope('sessions')
  @Mutation(() => DirectLinkType, {
    description:
      'Turn a template’s public signing link on or off, with an optional expiry and use limit, and what its sessions get.',
  })
  async setDirectLink(@Args() args: SetDirectLinkArgs, @Ctx() ctx: RequestContext): Promise<DirectLinkType> {
    return toDirectLinkView(await setDirectLink(ctx.services, ctx.em, ctx.actor, args), ctx.services.config.publicUrl);
  }

  @TokenScope('sessions')
  @Query(() => DirectLinkType, { description: 'A template’s public signing link.' })
  async directLink(
    @Arg('template_id', () => String, { nullable: true }) templateId: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<DirectLinkType> {
    return toDirectLinkView(await getDirectLink(ctx.em, ctx.actor, templateId), ctx.services.config.publicUrl);
  }
}
