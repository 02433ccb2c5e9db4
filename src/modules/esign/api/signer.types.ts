import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, Int, ObjectType } from 'type-graphql';
import { MaxItems } from '../../../platform/graphql/operation-limits';
import { Credential } from '../../../platform/graphql/token-scope';
import type { SignerRecord } from './session-rows';
import type { EsignSessionType } from './session.types';
import type { SigningOrder } from '../esign-session.entity';
import type { StoredElement } from '../signers/signer-state';
import { isSignersTurn } from '../signers/signer-turn';
import { signatureElements } from '../elements/pdf-layout';
import { currentPageOf, type StampPlacement } from '../documents';
import { LIMITS } from '../session/validation';

/** A signer as the owner reads them: their options, placed elements, checks and outcome. */

@ObjectType('Element', {
  simpleResolvers: true,
  description: 'A placed item. Units are PDF points, origin at the top-left of the page, y down.',
})
export class ElementType {
  @Field(() => String, { nullable: true })
  field_id!: string | null;

  @Field(() => Float)
  x!: number;

  @Field(() => Float)
  y!: number;

  @Field(() => Int, { description: 'Zero-based page of the uploaded PDF.' })
  page!: number;

  @Field({ description: 'Its kind: `signature`, `image`, or a field (docs/api.md, Element kinds).' })
  type!: string;

  @Field({ description: '`left`, `center` or `right`.' })
  alignment!: string;

  @Field(() => Float)
  width!: number;

  @Field(() => Float)
  height!: number;

  @Field()
  allow_wet_signature!: boolean;

  @Field(() => Float)
  font_size!: number;

  @Field(() => String, { nullable: true })
  format!: string | null;

  @Field(() => String, {
    nullable: true,
    description: "The asset of an `image` or `seal`; a field's prefill, then what its signer filled.",
  })
  value!: string | null;

  // The rules of fields (added by this service); null on `signature` and `image` elements.
  @Field(() => Boolean, { nullable: true })
  required?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  read_only?: boolean | null;

  @Field(() => String, { nullable: true })
  label?: string | null;

  @Field(() => Int, { nullable: true })
  min_length?: number | null;

  @Field(() => Int, { nullable: true })
  max_length?: number | null;

  @Field(() => String, { nullable: true })
  pattern?: string | null;

  @Field(() => Float, { nullable: true })
  min?: number | null;

  @Field(() => Float, { nullable: true })
  max?: number | null;

  @Field(() => [String], { nullable: true })
  options?: string[] | null;

  @Field(() => Boolean, { nullable: true })
  multiline?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  every_page?: boolean | null;

  @Field(() => String, { nullable: true, description: 'When the value was filled (ISO 8601), by its signer or the service.' })
  filled_at?: string | null;
}

@ObjectType('NameMatch', { simpleResolvers: true })
export class NameMatchType {
  @Field()
  enforce!: boolean;

  @Field(() => String, { nullable: true })
  prefill_name!: string | null;

  @Field(() => String, { nullable: true })
  signer_name!: string | null;

  @Field(() => Float, { nullable: true })
  score!: number | null;

  @Field({
    description:
      '`pending` (until the Aadhaar signature is recorded), `completed` (scored against the certificate’s CN), `unavailable` (the certificate carries no name to score; score and signer_name null) or `skipped` (not requested).',
  })
  status!: string;
}

@ObjectType('FaceMatch', { simpleResolvers: true })
export class FaceMatchType {
  @Field()
  enforce!: boolean;

  @Field(() => String, { nullable: true })
  ref_file_id!: string | null;

  @Field(() => String, { nullable: true })
  live_file_id!: string | null;

  @Field(() => Float, { nullable: true })
  match_threshold!: number | null;

  @Field(() => Int, { nullable: true })
  max_attempts!: number | null;

  @Field(() => Float, { nullable: true })
  liveness_score!: number | null;

  @Field(() => Float, { nullable: true })
  match_score!: number | null;
}

@ObjectType('Notification', { simpleResolvers: true })
export class NotificationType {
  @Field()
  invite!: boolean;

  @Field()
  completion!: boolean;

  @Field()
  whatsapp!: boolean;
}

@ObjectType('AadhaarCertDetails', {
  simpleResolvers: true,
  description:
    "What the Aadhaar eSign certificate the ESP returned says of its holder, read from its subject (any ESP's layout); each detail is null when the certificate does not carry it in a recognised form (docs/signing.md). The sandbox ESP's certificates carry all of them.",
})
export class AadhaarCertDetailsType {
  @Field(() => String, { nullable: true, description: 'The certificate’s CN.' })
  name!: string | null;

  @Field(() => String, { nullable: true, description: 'C, two letters (`IN`).' })
  country!: string | null;

  @Field(() => String, { nullable: true, description: 'ST.' })
  state!: string | null;

  @Field(() => String, { nullable: true, description: 'postalCode, a six-digit PIN.' })
  pin_code!: string | null;

  @Field(() => String, { nullable: true, description: 'The masked Aadhaar number: `XXXXXXXX` and its last four digits.' })
  aadhaar!: string | null;

  @Field(() => String, { nullable: true, description: 'Four digits.' })
  year_of_birth!: string | null;

  @Field(() => String, { nullable: true, description: '`M`, `F` or `T`.' })
  gender!: string | null;
}

@ObjectType('SignerLocation', {
  simpleResolvers: true,
  description: 'Where the signer was when the location check passed (added by this service).',
})
export class SignerLocationType {
  @Field({ description: '`device` (the browser’s geolocation) or `ip` (the request’s address).' })
  source!: string;

  @Field(() => Float, { nullable: true })
  latitude!: number | null;

  @Field(() => Float, { nullable: true })
  longitude!: number | null;

  @Field(() => Float, { nullable: true, description: 'The browser’s accuracy radius, metres.' })
  accuracy_m!: number | null;

  @Field(() => String, { nullable: true })
  ip!: string | null;

  @Field(() => Float, { nullable: true, description: 'Distance from the geofence centre, metres, when one is enforced.' })
  distance_m!: number | null;

  @Field()
  recorded_at!: string;
}

@ObjectType('EsignSigner', { simpleResolvers: true })
export class SignerType {
  @Field()
  signer_id!: string;

  @Field({ description: 'True only for the signer whose turn it is, while the session is pending.' })
  eligible!: boolean;

  @Credential()
  @Field({ description: '`{PUBLIC_URL}/sign/{token}`: the signer page.' })
  invite_url!: string;

  @Credential()
  @Field({ description: 'The signer credential: it opens only this signer page and its actions.' })
  token!: string;

  @Field()
  sign_type!: string;

  @Field(() => [Int])
  auth_mode!: number[];

  @Field(() => Int)
  max_retry!: number;

  @Field(() => String, { nullable: true })
  pfx_id!: string | null;

  @Field()
  full_name!: string;

  @Field(() => String, { nullable: true })
  email!: string | null;

  @Field(() => String, { nullable: true })
  country_code!: string | null;

  @Field(() => String, { nullable: true })
  mobile!: string | null;

  @Field()
  verify_email!: boolean;

  @Field()
  verify_mobile!: boolean;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field()
  accept_virtual_sign!: boolean;

  @Field({ description: '`pending`, `completed`, `failed` or `declined` (added).' })
  status!: string;

  @Field(() => [ElementType])
  @MaxItems(LIMITS.elementsPerSigner)
  elements!: ElementType[];

  @Field(() => AadhaarCertDetailsType, { nullable: true })
  aadhaar_cert_details!: AadhaarCertDetailsType | null;

  @Field()
  verify_location!: boolean;

  @Field(() => String, { nullable: true })
  location_source!: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The language of the signer’s messages (added): `en`, `hi`, `bn`, `mr`, `te`, `ta`, `gu`, `kn` or `ml`; null: not set (English).',
  })
  language!: string | null;

  @Field()
  enforce_geofence!: boolean;

  @Field(() => Float, { nullable: true })
  latitude!: number | null;

  @Field(() => Float, { nullable: true })
  longitude!: number | null;

  @Field(() => Float, { nullable: true })
  radius!: number | null;

  @Field(() => NameMatchType)
  name_match!: NameMatchType;

  @Field(() => FaceMatchType)
  face_match!: FaceMatchType;

  @Field(() => NotificationType)
  notification!: NotificationType;

  @Field(() => GraphQLJSONObject, {
    description:
      'Key: page index (as a string) of the current PDF; value: the {x, y} points of this signer’s signature appearances on it.',
  })
  positions!: Record<string, { x: number; y: number }[]>;

  @Field(() => Date, { nullable: true, description: 'When the email code was verified (added by this service).' })
  email_verified_at!: Date | null;

  @Field(() => Date, { nullable: true, description: 'When the mobile code was verified (added by this service).' })
  mobile_verified_at!: Date | null;

  @Field(() => SignerLocationType, { nullable: true, description: 'The recorded position, once the location check passed.' })
  location!: SignerLocationType | null;

  @Field(() => String, { nullable: true, description: 'Why the signer declined (added by this service).' })
  decline_reason!: string | null;

  @Field(() => Date, { nullable: true, description: 'When the signer declined (added by this service).' })
  declined_at!: Date | null;

  /** The signer's place (for `fields`); not a field of its own: the contract's signer has none. */
  position!: number;
}

/**
 * Where each signature appearance lands in its document's current PDF (stamp pages shift the stamped document's
 * pages), keyed by page as the contract shows it: one document's pages in a session made with `file_id`.
 */
export function positionsOf(elements: StoredElement[], stamps: StampPlacement): Record<string, { x: number; y: number }[]> {
  const positions: Record<string, { x: number; y: number }[]> = {};
  for (const element of signatureElements(elements)) {
    (positions[String(currentPageOf(element, stamps))] ??= []).push({ x: element.x, y: element.y });
  }
  return positions;
}

export function toSignerView(signer: SignerRecord, session: EsignSessionType, token: string, inviteUrl: string): SignerType {
  return {
    signer_id: signer.id,
    eligible: isSignersTurn(
      { status: session.status, signerIdx: session.signer_idx, signingOrder: session.signing_order as SigningOrder },
      signer,
    ),
    invite_url: inviteUrl,
    token,
    sign_type: signer.signType,
    auth_mode: [signer.authMode],
    max_retry: signer.maxRetry,
    pfx_id: signer.pfxId ?? null,
    full_name: signer.fullName,
    email: signer.email ?? null,
    country_code: signer.countryCode ?? null,
    mobile: signer.mobile ?? null,
    verify_email: signer.verifyEmail,
    verify_mobile: signer.verifyMobile,
    reason: signer.reason ?? null,
    accept_virtual_sign: signer.acceptVirtualSign,
    status: signer.status,
    elements: signer.elements.map((element) => ({ ...element })),
    aadhaar_cert_details: signer.aadhaarCertDetails ?? null,
    verify_location: signer.verifyLocation,
    location_source: signer.locationSource ?? null,
    language: signer.language ?? null,
    enforce_geofence: signer.enforceGeofence,
    latitude: signer.latitude ?? null,
    longitude: signer.longitude ?? null,
    radius: signer.radius ?? null,
    name_match: signer.nameMatch,
    face_match: signer.faceMatch,
    notification: signer.notification,
    positions: positionsOf(signer.elements, { stampPageCount: session.stamp_page_count, stampDocument: session.stampDocument }),
    email_verified_at: signer.emailVerifiedAt ?? null,
    mobile_verified_at: signer.mobileVerifiedAt ?? null,
    location: signer.location ?? null,
    decline_reason: signer.declineReason ?? null,
    declined_at: signer.declinedAt ?? null,
    position: signer.position,
  };
}
