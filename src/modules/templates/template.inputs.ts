import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, InputType, Int } from 'type-graphql';
import { ElementInput, NotificationInput, SignerInput } from '../esign/session.inputs';

/** A signer blueprint. Every field but `elements` is an optional default for the sessions started from it. */
@InputType('TemplateSignerInput')
export class TemplateSignerInput {
  @Field(() => String, { nullable: true })
  sign_type?: string | null;

  @Field(() => Int, { nullable: true })
  auth_mode?: number | null;

  @Field(() => Int, { nullable: true })
  max_retry?: number | null;

  @Field(() => String, { nullable: true })
  pfx_id?: string | null;

  @Field(() => String, { nullable: true })
  reason?: string | null;

  @Field(() => Boolean, { nullable: true })
  verify_email?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  verify_mobile?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  accept_virtual_sign?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  verify_location?: boolean | null;

  @Field(() => String, { nullable: true })
  location_source?: string | null;

  @Field(() => Boolean, { nullable: true })
  enforce_geofence?: boolean | null;

  @Field(() => Float, { nullable: true })
  latitude?: number | null;

  @Field(() => Float, { nullable: true })
  longitude?: number | null;

  @Field(() => Float, { nullable: true })
  radius?: number | null;

  @Field(() => [ElementInput], { nullable: true, description: 'At least one `signature` element.' })
  elements?: ElementInput[] | null;

  // Runtime-only options: accepted by the schema only to be refused with a clear message.
  @Field(() => Boolean, { nullable: true, description: 'Refused: runtime-only (give it in initialize-from-template).' })
  name_match?: boolean | null;

  @Field(() => String, { nullable: true, description: 'Refused: runtime-only.' })
  face_ref_file_id?: string | null;

  @Field(() => Float, { nullable: true, description: 'Refused: runtime-only.' })
  face_match_threshold?: number | null;

  @Field(() => Int, { nullable: true, description: 'Refused: runtime-only.' })
  face_max_attempts?: number | null;

  @Field(() => NotificationInput, { nullable: true, description: 'Refused: runtime-only.' })
  notification?: NotificationInput | null;
}

/** The runtime part of a signer in initialize-from-template: who signs, and values for the saved fields. */
@InputType('TemplateRuntimeSignerInput')
export class TemplateRuntimeSignerInput extends SignerInput {
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'Maps a template `field_id` to the `value` of that element; position and type stay the template’s.',
  })
  element_values?: Record<string, unknown> | null;
}
