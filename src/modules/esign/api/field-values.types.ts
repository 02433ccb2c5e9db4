import { Field, Int, ObjectType } from 'type-graphql';
import { MaxItems } from '../../../platform/graphql/operation-limits';
import { LIMITS } from '../session/validation';

@ObjectType('FieldValue', {
  simpleResolvers: true,
  description: 'One field of one signer with its value (fields are the elements with a form field: not signature or image).',
})
export class FieldValueType {
  @Field()
  field_id!: string;

  @Field()
  signer_id!: string;

  @Field(() => Int, { description: 'The signer’s place in the session, from 0.' })
  signer_position!: number;

  @Field()
  type!: string;

  @Field(() => String, { nullable: true })
  label!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'As kept: the owner’s prefill, then what the signer filled; date_signed: the signing time (ISO 8601).',
  })
  value!: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The text the value is drawn as (a date in its format, date_signed as "27/11/2026 14:05 IST"); null without a value.',
  })
  shown!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'When the signer (or the service) filled it (ISO 8601); null for a prefill.',
  })
  filled_at!: string | null;

  @Field(() => String, {
    nullable: true,
    description: '`signer`, `service` (date_signed) or `owner` (a prefill no one changed); null while empty.',
  })
  filled_by!: string | null;
}

@ObjectType('FieldValues')
export class FieldValuesType {
  @Field()
  client_id!: string;

  @Field(() => [FieldValueType], { description: 'Every signer’s fields, signer by signer, each in element order.' })
  @MaxItems(LIMITS.signers.max * LIMITS.elementsPerSigner)
  fields!: FieldValueType[];
}
