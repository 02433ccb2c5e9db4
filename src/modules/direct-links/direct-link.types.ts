import { ArgsType, Field, InputType, Int, ObjectType } from 'type-graphql';
import { StampRequestInput } from '../esign';
import { DirectLink } from './direct-link.entity';
import type { DirectLinkOptions } from './link-request';
import { directLinkUrl } from './manage-direct-links';

@InputType('DirectLinkSignerInput')
export class DirectLinkSignerInput {
  @Field(() => String, { nullable: true })
  full_name?: string | null;

  @Field(() => String, { nullable: true })
  email?: string | null;

  @Field(() => String, { nullable: true })
  mobile?: string | null;

  @Field(() => String, { nullable: true })
  country_code?: string | null;

  @Field(() => String, { nullable: true, description: 'Where the template saves no reason for this signer.' })
  reason?: string | null;
}

@ArgsType()
export class SetDirectLinkArgs {
  @Field(() => String, { nullable: true })
  template_id?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'On (true) or off (false).' })
  enabled?: boolean | null;

  @Field(() => Date, { nullable: true, description: 'After this the link starts nothing; null: no end.' })
  expires_at?: Date | null;

  @Field(() => Int, { nullable: true, description: 'Sessions it may start in all, 1 to 1,000,000; null: no limit.' })
  max_uses?: number | null;

  @Field(() => Int, { nullable: true, description: 'The template signer the visitor is, from 0 (default 0).' })
  visitor_position?: number | null;

  @Field(() => String, { nullable: true, description: 'The visitor’s reason for signing, where the template saves none.' })
  visitor_reason?: string | null;

  @Field(() => [DirectLinkSignerInput], {
    nullable: true,
    description: 'The contacts of the template’s other signers, in order, the visitor’s place left out.',
  })
  signers?: DirectLinkSignerInput[] | null;

  @Field(() => String, { nullable: true })
  sign_type?: string | null;

  @Field(() => Int, { nullable: true })
  expiry_seconds?: number | null;

  @Field(() => String, { nullable: true })
  redirect_url?: string | null;

  @Field(() => String, { nullable: true })
  folder?: string | null;

  @Field(() => StampRequestInput, { nullable: true, description: 'Stamps each session reserves from your inventory.' })
  stamp?: StampRequestInput | null;
}

@ObjectType('DirectLink', { simpleResolvers: true, description: 'A template’s public signing link (docs/direct-links.md).' })
export class DirectLinkType {
  @Field({ description: '`dlink_...`' })
  client_id!: string;

  @Field()
  template_id!: string;

  @Field({ description: '`{PUBLIC_URL}/d/{slug}`: share it; whoever opens it signs a session of their own.' })
  url!: string;

  @Field()
  enabled!: boolean;

  @Field(() => Date, { nullable: true })
  expires_at!: Date | null;

  @Field(() => Int, { nullable: true })
  max_uses!: number | null;

  @Field(() => Int, { description: 'Sessions it has started.' })
  uses!: number;

  @Field(() => Int)
  visitor_position!: number;

  @Field()
  created_at!: Date;
}

export function toDirectLinkView(link: DirectLink, publicUrl: string): DirectLinkType {
  return {
    client_id: link.id,
    template_id: link.template.id,
    url: directLinkUrl(publicUrl, link),
    enabled: link.enabled,
    expires_at: link.expiresAt ?? null,
    max_uses: link.maxUses ?? null,
    uses: link.uses,
    visitor_position: (link.options as DirectLinkOptions).visitor_position ?? 0,
    created_at: link.createdAt,
  };
}
