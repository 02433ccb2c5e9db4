import { Field, Float, Int, ObjectType } from 'type-graphql';
import { PageOf } from '../../platform/graphql/page-type';
import { ElementType, LIMITS } from '../esign';
import type { Template, TemplateSignerBlueprint } from './template.entity';
import { MaxItems } from '../../platform/graphql/operation-limits';

@ObjectType('TemplateSigner', {
  simpleResolvers: true,
  description: 'A saved signer layout; every field but `elements` is a default (null: not set).',
})
export class TemplateSignerType {
  @Field(() => String, { nullable: true })
  sign_type!: string | null;

  @Field(() => [Int], { nullable: true })
  auth_mode!: number[] | null;

  @Field(() => Int, { nullable: true })
  max_retry!: number | null;

  @Field(() => String, { nullable: true })
  pfx_id!: string | null;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field(() => Boolean, { nullable: true })
  verify_email!: boolean | null;

  @Field(() => Boolean, { nullable: true })
  verify_mobile!: boolean | null;

  @Field(() => Boolean, { nullable: true })
  accept_virtual_sign!: boolean | null;

  @Field(() => Boolean, { nullable: true })
  verify_location!: boolean | null;

  @Field(() => String, { nullable: true })
  location_source!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The signer’s language (added): `en`, `hi`, `bn`, `mr`, `te`, `ta`, `gu`, `kn` or `ml`.',
  })
  language!: string | null;

  @Field(() => Boolean, { nullable: true })
  enforce_geofence!: boolean | null;

  @Field(() => Float, { nullable: true })
  latitude!: number | null;

  @Field(() => Float, { nullable: true })
  longitude!: number | null;

  @Field(() => Float, { nullable: true })
  radius!: number | null;

  @Field(() => [ElementType])
  @MaxItems(LIMITS.elementsPerSigner)
  elements!: ElementType[];
}

@ObjectType('TemplateDocument', {
  simpleResolvers: true,
  description: 'One document of a template (added): a template saved with `file_id` has one.',
})
export class TemplateDocumentType {
  @Field(() => Int, { description: 'Zero-based, the order signers see the documents in; elements name it as `document`.' })
  position!: number;

  @Field({ description: 'What sessions started from the template call it.' })
  name!: string;

  @Field({ description: 'One of your PDFs.' })
  file_id!: string;
}

@ObjectType('Template', { simpleResolvers: true })
export class TemplateType {
  @Field()
  client_id!: string;

  @Field()
  name!: string;

  @Field({ description: 'The first document’s PDF.' })
  file_id!: string;

  @Field(() => [TemplateDocumentType], { description: 'The template’s documents, in order; the first is `file_id` (added).' })
  @MaxItems(LIMITS.documents.max)
  documents!: TemplateDocumentType[];

  @Field(() => String, { nullable: true })
  folder!: string | null;

  @Field(() => Int, { description: 'Starts at 1; every update adds one. Sessions record the version they came from.' })
  version!: number;

  @Field()
  created_at!: Date;

  @Field()
  updated_at!: Date;

  @Field(() => [TemplateSignerType])
  @MaxItems(LIMITS.signers.max)
  signers!: TemplateSignerType[];
}

@ObjectType('TemplatePage', { simpleResolvers: true })
export class TemplatePageType extends PageOf(TemplateType) {}

@ObjectType('DeletedTemplate', { simpleResolvers: true })
export class DeletedTemplateType {
  @Field()
  client_id!: string;

  @Field()
  deleted_at!: Date;
}

function toTemplateSigner(blueprint: TemplateSignerBlueprint): TemplateSignerType {
  return {
    ...blueprint,
    auth_mode: blueprint.auth_mode === null ? null : [blueprint.auth_mode],
    language: blueprint.language ?? null,
    elements: blueprint.elements.map((e) => ({ ...e })),
  };
}

export function toTemplateView(template: Template): TemplateType {
  return {
    client_id: template.id,
    name: template.name,
    file_id: template.file.id,
    documents: template.documents.map((document, position) => ({ position, name: document.name, file_id: document.file_id })),
    folder: template.folder ?? null,
    version: template.version,
    created_at: template.createdAt,
    updated_at: template.updatedAt,
    signers: template.signers.map(toTemplateSigner),
  };
}
