import { Field, Int, ObjectType } from 'type-graphql';
import { MaxItems } from '../../../platform/graphql/operation-limits';
import type { SignatureReport } from '../../signing';
import { LIMITS } from '../session/validation';
import type { SessionVerification } from '../completion/verify-session';

@ObjectType('SignatureTimestamp', {
  simpleResolvers: true,
  description: 'The RFC 3161 signature time-stamp of a signature (PAdES B-T), checked.',
})
export class SignatureTimestampType {
  @Field(() => Date, { nullable: true, description: 'When the time-stamping authority saw the signature (`genTime`).' })
  time!: Date | null;

  @Field(() => String, { nullable: true, description: 'Subject of the TSA certificate (RFC 4514).' })
  tsa!: string | null;

  @Field(() => String, { nullable: true, description: 'The TSA policy the token was issued under (an OID).' })
  policy!: string | null;

  @Field({
    description: 'The token verifies, is signed by a time-stamping certificate, and stamps this very signature value.',
  })
  valid!: boolean;

  @Field(() => Boolean, {
    nullable: true,
    description: 'The TSA certificate chains to a trust anchor at `time`; null: no trust anchors.',
  })
  chain_valid!: boolean | null;

  @Field(() => [String])
  problems!: string[];
}

@ObjectType('SignatureRevocation', {
  simpleResolvers: true,
  description: 'What the document’s /DSS says of the signer certificate’s revocation (PAdES B-LT).',
})
export class SignatureRevocationType {
  @Field({ description: '`good`, `revoked`, `unknown`, or `unavailable` (no embedded answer about it).' })
  status!: string;

  @Field(() => String, { nullable: true, description: '`ocsp` or `crl`; null when unavailable.' })
  source!: string | null;
}

@ObjectType('SignatureVerification', { simpleResolvers: true, description: 'One signature of a PDF, checked in-process.' })
export class SignatureVerificationType {
  @Field({ description: 'The signature field (`/T`); in Esign sessions, the signer id.' })
  field_name!: string;

  @Field(() => String, { nullable: true, description: '`/Name` of the signature dictionary.' })
  signer_name!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'Subject of the signer certificate (RFC 4514), e.g. `CN=..., O=..., C=IN`.',
  })
  signer_subject!: string | null;

  @Field(() => Date, { nullable: true, description: 'When it was signed: `/M` of the signature dictionary.' })
  signing_time!: Date | null;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field(() => String, { nullable: true, description: '`/SubFilter`, e.g. `ETSI.CAdES.detached`.' })
  sub_filter!: string | null;

  @Field(() => [Int], { description: 'The signed ranges: `[offset1, length1, offset2, length2]`.' })
  byte_range!: number[];

  @Field({
    description: 'The ByteRange starts at 0, its gap is exactly the `/Contents` hex string, and it stays inside the file.',
  })
  byte_range_valid!: boolean;

  @Field({ description: 'The signed digest equals the digest of the bytes the ByteRange covers (nothing signed was changed).' })
  digest_valid!: boolean;

  @Field({ description: 'The CMS signature verifies with the signer certificate.' })
  signature_valid!: boolean;

  @Field({ description: 'The ESS signing-certificate-v2 attribute names the signer certificate (PAdES B-B).' })
  signing_certificate_v2_valid!: boolean;

  @Field(() => Boolean, {
    nullable: true,
    description:
      'The signer certificate chains to a trust anchor (TRUST_ANCHORS; in sandbox also the sandbox root CA), valid at the time the signature time-stamp proves, else at `signing_time`; null: no trust anchors.',
  })
  certificate_chain_valid!: boolean | null;

  @Field(() => SignatureTimestampType, { nullable: true, description: 'The signature time-stamp; null when there is none.' })
  timestamp!: SignatureTimestampType | null;

  @Field(() => SignatureRevocationType, {
    nullable: true,
    description: 'Revocation of the signer certificate per the document’s /DSS; null without a /DSS.',
  })
  revocation!: SignatureRevocationType | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The PAdES baseline level reached: `B-B`, `B-T` (a valid signature time-stamp), `B-LT` (and good revocation data in the /DSS), `B-LTA` (and a valid document time-stamp after it); null: none, and for a document time-stamp (`sub_filter` `ETSI.RFC3161`).',
  })
  pades_level!: string | null;

  @Field({ description: 'Nothing was appended after this signature: its ranges reach the end of the file.' })
  covers_whole_document!: boolean;

  @Field(() => Int, { description: 'Where the revision this signature signs ends, in bytes from the start of the file.' })
  revision_bytes!: number;

  @Field(() => [String], {
    description:
      'The incremental updates appended after this signature, in plain words, oldest first (e.g. `signature of field X added`, `appearance of annotation 12 0 R changed`, `page 5 0 R (page 2) changed`).',
  })
  changes_after!: string[];

  @Field(() => [String], { description: 'Why a check failed; empty when all hold.' })
  problems!: string[];
}

@ObjectType('DocumentRevision', {
  simpleResolvers: true,
  description: 'One revision of the PDF (an incremental update), from the one the first signature covers on, judged.',
})
export class DocumentRevisionType {
  @Field(() => Int, {
    description: '1: the document the first signature covers, with every update before it; later ones count up.',
  })
  number!: number;

  @Field(() => Int, { description: 'Where the revision ends, in bytes from the start of the file.' })
  end_bytes!: number;

  @Field(() => [String], { description: 'The fields whose signature or document time-stamp this revision adds.' })
  signatures!: string[];

  @Field({
    description:
      "`original` (what the first signature covers), `signing_only` (it added only what signing may add: a signature, a document time-stamp, /DSS validation data, annotations, signature fields and their appearances), `pages_appended` (that, and pages appended after the last one, none changed, covered by a signature of the same update: an appended certificate of completion), `fields_filled` (besides what signing may add, it filled form fields that the signature it adds locks: a signer's values), or `content_changed` (it changed what the document shows, or pointed objects at older versions, or freed objects in use).",
  })
  verdict!: string;

  @Field(() => [String], { description: 'What the update did, in plain words, signatures first; empty for the original.' })
  changes!: string[];

  @Field(() => [String], { description: 'The changes signing may not make: why the verdict is `content_changed`.' })
  content_changes!: string[];
}

@ObjectType('EsignDocumentVerification', {
  simpleResolvers: true,
  description: 'Every signature of one document of a session’s envelope, as it stands, checked in-process (added).',
})
export class DocumentVerificationType {
  @Field({ description: '`doc_...`' })
  document_id!: string;

  @Field(() => Int, { description: 'Zero-based, as in the envelope.' })
  position!: number;

  @Field()
  name!: string;

  @Field({ description: 'The PDF checked: the document’s `current_pdf_file_id`.' })
  file_id!: string;

  @Field(() => Int)
  document_bytes!: number;

  @Field(() => [SignatureVerificationType], { description: 'In file order.' })
  signatures!: SignatureVerificationType[];

  @Field(() => [DocumentRevisionType], {
    description: 'The revisions from the one the first signature covers on, oldest first, each judged.',
  })
  revisions!: DocumentRevisionType[];

  @Field({ description: 'As the report’s `all_valid`, for this document.' })
  all_valid!: boolean;
}

@ObjectType('SignatureVerificationReport', {
  simpleResolvers: true,
  description: 'Every signature of a session’s current PDF, checked in-process.',
})
export class SignatureVerificationReportType {
  @Field()
  client_id!: string;

  @Field({ description: 'The PDF checked: the session’s `current_pdf_file_id`.' })
  file_id!: string;

  @Field(() => Int)
  document_bytes!: number;

  @Field(() => [SignatureVerificationType], { description: 'In file order.' })
  signatures!: SignatureVerificationType[];

  @Field(() => [DocumentRevisionType], {
    description: 'The revisions from the one the first signature covers on, oldest first, each judged.',
  })
  revisions!: DocumentRevisionType[];

  @Field({
    description:
      'At least one signature, each with a well-formed ByteRange, a valid digest and signature (and a valid chain to a trust anchor), and no revision after the first signature changing content (updates after a signature add only what signing may add).',
  })
  all_valid!: boolean;

  @Field(() => [DocumentVerificationType], {
    description:
      'Every document of the envelope, in order, each checked the same way; the fields above are the first document’s report (added).',
  })
  @MaxItems(LIMITS.documents.max)
  documents!: DocumentVerificationType[];
}

function toSignatureView(signature: SignatureReport): SignatureVerificationType {
  return {
    ...signature,
    signing_time: signature.signing_time === null ? null : new Date(signature.signing_time),
    timestamp: signature.timestamp && {
      ...signature.timestamp,
      time: signature.timestamp.time === null ? null : new Date(signature.timestamp.time),
    },
  };
}

export function toVerificationView(report: SessionVerification): SignatureVerificationReportType {
  return {
    ...report,
    signatures: report.signatures.map(toSignatureView),
    documents: report.documents.map((document) => ({ ...document, signatures: document.signatures.map(toSignatureView) })),
  };
}
