import { Field, ObjectType } from 'type-graphql';
import type { PfxCredential } from './pfx-credential.entity';

/** What the service tells about an uploaded certificate: never the key, never the file. */
@ObjectType('PfxCertificate', { simpleResolvers: true })
export class PfxType {
  @Field({ description: '`pfx_...`: give it as a signer’s `pfx_id`.' })
  pfx_id!: string;

  @Field({ description: 'The uploaded file’s name.' })
  name!: string;

  @Field()
  subject!: string;

  @Field()
  issuer!: string;

  @Field()
  serial_number!: string;

  @Field()
  not_before!: Date;

  @Field()
  not_after!: Date;

  @Field()
  created_at!: Date;
}

@ObjectType('DeletedPfxCertificate', { simpleResolvers: true })
export class DeletedPfxType {
  @Field()
  pfx_id!: string;

  @Field()
  deleted_at!: Date;
}

export function toPfxView(credential: PfxCredential): PfxType {
  return {
    pfx_id: credential.id,
    name: credential.name,
    subject: credential.subject,
    issuer: credential.issuer,
    serial_number: credential.serialNumber,
    not_before: credential.notBefore,
    not_after: credential.notAfter,
    created_at: credential.createdAt,
  };
}
