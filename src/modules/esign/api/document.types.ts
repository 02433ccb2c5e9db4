import { Field, Int, ObjectType } from 'type-graphql';
import { MaxItems } from '../../../platform/graphql/operation-limits';
import { LIMITS } from '../session/validation';

@ObjectType('EsignDocumentSignature', { simpleResolvers: true })
export class EsignDocumentSignatureType {
  @Field()
  signer_id!: string;

  @Field({ description: '`pending` until the signer signs, then `completed` (as the signer reads).' })
  status!: string;

  @Field(() => Date, { nullable: true })
  signed_at!: Date | null;
}

@ObjectType('EsignDocument', {
  simpleResolvers: true,
  description: 'One document of a session’s envelope (added): a session made with `file_id` has one.',
})
export class EsignDocumentType {
  @Field({ description: '`doc_...`' })
  document_id!: string;

  @Field(() => Int, { description: 'Zero-based, the order signers see the documents in; elements name it as `document`.' })
  position!: number;

  @Field()
  name!: string;

  @Field({ description: 'The uploaded PDF.' })
  file_id!: string;

  @Field({ description: 'The PDF as it stands now: stamp pages in front, each signed revision, at completion the final one.' })
  current_pdf_file_id!: string;

  @Field(() => Int, { description: 'Stamp certificate pages in front of this document.' })
  stamp_page_count!: number;

  @Field({ description: '`pending` while a signature of it is missing; `completed` once every signer of it signed.' })
  status!: string;

  @Field(() => [EsignDocumentSignatureType], { description: 'The signers who sign this document, in signing order.' })
  signatures!: EsignDocumentSignatureType[];

  @Field(() => [String], { description: 'The `field_id` of every element on this document, in signer order.' })
  field_ids!: string[];
}

@ObjectType('EsignDocumentDownload', { simpleResolvers: true, description: 'A short-lived link to one signed document (added).' })
export class EsignDocumentDownloadType {
  @Field({ description: '`doc_...`' })
  document_id!: string;

  @Field(() => Int, { description: 'Zero-based, as in the envelope.' })
  position!: number;

  @Field()
  name!: string;

  @Field({
    description:
      'The name it downloads as, and its name in the ZIP: the document’s name made safe as a file name, `-signed.pdf`, numbered where two would be the same.',
  })
  filename!: string;

  @Field({ description: 'A short-lived signed URL of the document as signed (its current PDF).' })
  url!: string;

  @Field(() => Int, { description: 'Seconds the URL stays valid.' })
  expires_in!: number;
}

@ObjectType('EsignDocumentDownloads', {
  simpleResolvers: true,
  description: 'Short-lived links to every signed document of a completed session, and to a ZIP of them all (added).',
})
export class EsignDocumentDownloadsType {
  @Field()
  client_id!: string;

  @Field(() => [EsignDocumentDownloadType], { description: 'In the envelope’s order.' })
  @MaxItems(LIMITS.documents.max)
  documents!: EsignDocumentDownloadType[];

  @Field({ description: 'A short-lived signed URL of a ZIP of every signed document, under their `filename`s.' })
  zip_url!: string;

  @Field(() => Int, { description: 'Seconds the URLs stay valid.' })
  expires_in!: number;
}
