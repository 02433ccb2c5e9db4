import { Arg, Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../platform/graphql/context';
import { TokenScope } from '../../platform/graphql/token-scope';
import { createBrowserToken } from './browser-tokens';
import { createToken, listTokens, revokeToken, rotateToken } from './manage-tokens';
import {
  AccessTokenPageType,
  BrowserTokenArgs,
  CreateTokenArgs,
  IssuedAccessTokenType,
  RevokedAccessTokenType,
  RotateTokenArgs,
  TokenListArgs,
  toIssuedView,
  toTokenView,
} from './token.types';

/** The account's own tokens: only a token of scope `all` manages them; any token that reads a resource mints browser tokens for it. */
@Resolver()
export class TokenResolver {
  @TokenScope('account')
  @Mutation(() => IssuedAccessTokenType, {
    description: 'Make an access token: a name, scopes, an optional expiry; its secret is answered once.',
  })
  async createToken(@Args() args: CreateTokenArgs, @Ctx() ctx: RequestContext): Promise<IssuedAccessTokenType> {
    return toIssuedView(await createToken(ctx.em, ctx.actor, args));
  }

  @TokenScope('account')
  @Query(() => AccessTokenPageType, { description: 'Your tokens (not browser tokens), newest first, without their secrets.' })
  async tokens(@Args() args: TokenListArgs, @Ctx() ctx: RequestContext): Promise<AccessTokenPageType> {
    const page = await listTokens(ctx.em, ctx.actor, args);
    return { items: page.items.map(toTokenView), has_next: page.has_next };
  }

  @TokenScope('account')
  @Mutation(() => IssuedAccessTokenType, {
    description: 'A new secret for a token (same id, name, scopes, expiry); the old one stops after grace_seconds.',
  })
  async rotateToken(@Args() args: RotateTokenArgs, @Ctx() ctx: RequestContext): Promise<IssuedAccessTokenType> {
    return toIssuedView(await rotateToken(ctx.em, ctx.actor, args));
  }

  @TokenScope('account')
  @Mutation(() => RevokedAccessTokenType, {
    description: 'Revoke a token: it answers 401 from now on; sockets opened with it close.',
  })
  async revokeToken(
    @Arg('client_id', () => String, { nullable: true }) clientId: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<RevokedAccessTokenType> {
    const token = await revokeToken(ctx.em, ctx.actor, clientId);
    return { client_id: token.id, revoked_at: token.revokedAt! };
  }

  @TokenScope('any')
  @Mutation(() => IssuedAccessTokenType, {
    description:
      'A short-lived token (at most an hour) for a browser: it reads and follows one session or stamp order, nothing else.',
  })
  async createBrowserToken(@Args() args: BrowserTokenArgs, @Ctx() ctx: RequestContext): Promise<IssuedAccessTokenType> {
    return toIssuedView(await createBrowserToken(ctx.services, ctx.em, ctx.actor, args));
  }
}
