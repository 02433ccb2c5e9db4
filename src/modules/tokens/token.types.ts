import { ArgsType, Field, Int, ObjectType } from 'type-graphql';
import { PageArgs } from '../../platform/graphql/paging';
import { PageOf } from '../../platform/graphql/page-type';
import { Credential } from '../../platform/graphql/token-scope';
import type { AccessToken } from '../users';
import type { TokenView } from './manage-tokens';

@ObjectType('AccessToken', {
  simpleResolvers: true,
  description: 'One of your access tokens (its secret is shown once, when it is made or rotated).',
})
export class AccessTokenType {
  @Field({ description: '`tok_...`' })
  client_id!: string;

  @Field(() => String, { nullable: true })
  name!: string | null;

  @Field({
    description:
      '`user`: a token of the account, within its scopes; `admin`: an operator token made by the CLI; `browser`: one resource, read and followed.',
  })
  kind!: string;

  @Field(() => [String], {
    description: '`all`, `read`, `sessions`, `stamps`, `webhooks` (docs/tokens.md); a browser token has none.',
  })
  scopes!: string[];

  @Field(() => String, { nullable: true, description: 'A browser token’s resource.' })
  resource_id!: string | null;

  @Field(() => Date, { nullable: true, description: 'Null: until revoked.' })
  expires_at!: Date | null;

  @Field()
  created_at!: Date;

  @Field(() => Date, { nullable: true, description: 'The last request made with it, to the minute.' })
  last_used_at!: Date | null;

  @Field(() => Date, { nullable: true })
  revoked_at!: Date | null;
}

@ObjectType('IssuedAccessToken', {
  simpleResolvers: true,
  description: 'A token just made or rotated, with its secret: shown this once.',
})
export class IssuedAccessTokenType extends AccessTokenType {
  @Credential()
  @Field({ description: 'The secret (`Authorization: Bearer ...`). It is never shown again.' })
  token!: string;
}

@ObjectType('AccessTokenPage', { simpleResolvers: true })
export class AccessTokenPageType extends PageOf(AccessTokenType) {}

@ObjectType('RevokedAccessToken', { simpleResolvers: true })
export class RevokedAccessTokenType {
  @Field()
  client_id!: string;

  @Field()
  revoked_at!: Date;
}

@ArgsType()
export class CreateTokenArgs {
  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => [String], { nullable: true, description: 'One or more of `all`, `read`, `sessions`, `stamps`, `webhooks`.' })
  scopes?: string[] | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Seconds until it stops working, 60 to 157,680,000 (five years); absent: until revoked.',
  })
  expires_in?: number | null;
}

@ArgsType()
export class RotateTokenArgs {
  @Field(() => String, { nullable: true })
  client_id?: string | null;

  @Field(() => Int, { nullable: true, description: 'Seconds the previous secret keeps working, 0 (default) to 86,400.' })
  grace_seconds?: number | null;
}

@ArgsType()
export class BrowserTokenArgs {
  @Field(() => String, { nullable: true, description: 'The session (`esign_...`) or stamp order (`stamp_...`) it follows.' })
  resource_id?: string | null;

  @Field(() => Int, { nullable: true, description: 'Seconds it works, 60 to 3600 (default 900).' })
  expires_in?: number | null;
}

@ArgsType()
export class TokenListArgs extends PageArgs {}

export function toTokenView(token: AccessToken): AccessTokenType {
  return {
    client_id: token.id,
    name: token.label ?? null,
    kind: token.scope,
    scopes: token.scope === 'browser' ? [] : token.scope === 'admin' ? ['all'] : (token.scopes ?? ['all']),
    resource_id: token.resourceId ?? null,
    expires_at: token.expiresAt ?? null,
    created_at: token.createdAt,
    last_used_at: token.lastUsedAt ?? null,
    revoked_at: token.revokedAt ?? null,
  };
}

export function toIssuedView({ token, secret }: TokenView): IssuedAccessTokenType {
  return { ...toTokenView(token), token: secret! };
}
