import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType } from 'type-graphql';
import { SignerInput, SignerLayoutInput } from '../esign';

/**
 * A signer blueprint. Every field but `elements` is an optional default for the sessions started from it;
 * the runtime-only options (`name_match`, `face_*`, `notification`) are refused by name.
 */
@InputType('TemplateSignerInput')
export class TemplateSignerInput extends SignerLayoutInput {}

/** The runtime part of a signer in initialize-from-template: who signs, and values for the saved fields. */
@InputType('TemplateRuntimeSignerInput')
export class TemplateRuntimeSignerInput extends SignerInput {
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'Maps a template `field_id` to the `value` of that element; position and type stay the template’s.',
  })
  element_values?: Record<string, unknown> | null;
}
