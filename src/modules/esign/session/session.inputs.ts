import { Field, Float, InputType, Int } from 'type-graphql';

/**
 * Request shapes of initialize-esign (and, after the merge, initialize-from-template). Every field is
 * nullable in the schema on purpose: absent required fields are reported together by the service as
 * `missing_fields`, which GraphQL's own non-null checks could not do in the contract's terms.
 */
@InputType('ElementInput')
export class ElementInput {
  @Field(() => Float, { nullable: true, description: 'PDF points from the left edge of the page.' })
  x?: number | null;

  @Field(() => Float, { nullable: true, description: 'PDF points from the top edge of the page (y grows downwards).' })
  y?: number | null;

  @Field(() => Int, { nullable: true, description: 'Zero-based page of the uploaded PDF.' })
  page?: number | null;

  @Field(() => Int, {
    nullable: true,
    description: 'The document the element is on: a zero-based index into `documents`; default 0, the first (added).',
  })
  document?: number | null;

  @Field(() => String, {
    nullable: true,
    description:
      '`signature`, `image`, `initials`, `text`, `number`, `date`, `checkbox`, `radio`, `dropdown`, `name`, `email`, `date_signed` or `seal`.',
  })
  type?: string | null;

  @Field(() => String, { nullable: true, description: '`left`, `center` or `right`.' })
  alignment?: string | null;

  @Field(() => Float, { nullable: true })
  width?: number | null;

  @Field(() => Float, { nullable: true })
  height?: number | null;

  @Field(() => Boolean, { nullable: true })
  allow_wet_signature?: boolean | null;

  @Field(() => Float, { nullable: true })
  font_size?: number | null;

  @Field(() => String, { nullable: true })
  format?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'A prefilled value: for `image` and `seal` the client_id of an uploaded asset; for fields the signer fills, what the page offers (the value itself when `read_only`).',
  })
  value?: string | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Fields: the signer must fill it (default true; checkbox: must tick it, default false).',
  })
  required?: boolean | null;

  @Field(() => Boolean, {
    nullable: true,
    description: "Fields: the owner's `value` is final; the signer sees it and cannot change it.",
  })
  read_only?: boolean | null;

  @Field(() => String, { nullable: true, description: 'Fields: what the signing page calls it (at most 200 characters).' })
  label?: string | null;

  @Field(() => Int, { nullable: true, description: '`text`, `name`, `initials`: the fewest characters.' })
  min_length?: number | null;

  @Field(() => Int, { nullable: true, description: '`text`, `name`, `initials`: the most characters.' })
  max_length?: number | null;

  @Field(() => String, {
    nullable: true,
    description: '`text`, `name`, `initials`: a regular expression (RE2 syntax) the whole value must match.',
  })
  pattern?: string | null;

  @Field(() => Float, { nullable: true, description: '`number`: the smallest value.' })
  min?: number | null;

  @Field(() => Float, { nullable: true, description: '`number`: the largest value.' })
  max?: number | null;

  @Field(() => [String], { nullable: true, description: '`radio` and `dropdown`: the choices, in order.' })
  options?: string[] | null;

  @Field(() => Boolean, { nullable: true, description: '`text`: several lines, wrapped to the box.' })
  multiline?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: '`initials`: at the same place on every page of the uploaded document.' })
  every_page?: boolean | null;
}

@InputType('NotificationInput')
export class NotificationInput {
  @Field(() => Boolean, { nullable: true })
  invite?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  completion?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  whatsapp?: boolean | null;
}

@InputType('DscCertificateInput', {
  description: 'Which Digital Signature Certificate a `dsc` signer must sign with; every rule given must hold (added).',
})
export class DscCertificateInput {
  @Field(() => String, { nullable: true, description: 'The holder’s PAN (10 characters, e.g. ABCDE1234F).' })
  pan?: string | null;

  @Field(() => String, { nullable: true, description: 'The certificate subject’s organisation (O), compared without case.' })
  organisation?: string | null;

  @Field(() => String, { nullable: true, description: 'The certificate’s own serial number, in hex.' })
  serial?: string | null;
}

@InputType('EmailTemplateOverridesInput')
export class EmailTemplateOverridesInput {
  @Field(() => String, { nullable: true })
  company_name?: string | null;

  @Field(() => String, { nullable: true })
  legal_name?: string | null;

  @Field(() => String, { nullable: true })
  support_email?: string | null;
}

@InputType('StampRequestInput')
export class StampRequestInput {
  @Field(() => String, { nullable: true, description: 'Amount flow: total duty in rupees, as a decimal string.' })
  amount?: string | null;

  @Field(() => String, { nullable: true })
  state_code?: string | null;

  @Field(() => String, { nullable: true })
  article_id?: string | null;

  @Field(() => String, { nullable: true })
  first_party_name?: string | null;

  @Field(() => String, { nullable: true })
  second_party_name?: string | null;

  @Field(() => [String], { nullable: true, description: 'Explicit flow: `stamp_inst_...` identifiers.' })
  stamp_instance_ids?: string[] | null;

  @Field(() => Boolean, {
    nullable: true,
    description:
      'true: take stamps of mock orders only; absent or false (default): real stamps only. A session never mixes the two (added).',
  })
  mock?: boolean | null;

  @Field(() => Int, {
    nullable: true,
    description: 'The document the stamp pages are put in front of: a zero-based index into `documents`; default 0 (added).',
  })
  document?: number | null;
}

/** One document of an envelope: an uploaded PDF and the name signers see it by. */
@InputType('DocumentInput')
export class DocumentInput {
  @Field(() => String, { nullable: true, description: 'A PDF from upload-pdf.' })
  file_id?: string | null;

  @Field(() => String, { nullable: true, description: 'What signers see it called; default the uploaded file’s name.' })
  name?: string | null;
}

/**
 * Everything about a signer except who they are: a template signer is exactly this (runtime-only options
 * included, so that a template can refuse them by name), a session signer adds the person.
 */
@InputType('SignerLayoutInput')
export class SignerLayoutInput {
  @Field(() => String, { nullable: true })
  reason?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The language of the signer’s messages (added): `en`, `hi`, `bn`, `mr`, `te`, `ta`, `gu`, `kn` or `ml` (BCP 47); not set: English.',
  })
  language?: string | null;

  @Field(() => String, { nullable: true, description: 'Overrides the session `sign_type` for this signer (`dsc` added).' })
  sign_type?: string | null;

  @Field(() => Int, { nullable: true })
  auth_mode?: number | null;

  @Field(() => Int, { nullable: true })
  max_retry?: number | null;

  @Field(() => String, { nullable: true, description: 'Required when the signer signs with `pfx`.' })
  pfx_id?: string | null;

  @Field(() => Boolean, { nullable: true })
  verify_email?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  verify_mobile?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  accept_virtual_sign?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Aadhaar signers only; ignored for others.' })
  name_match?: boolean | null;

  @Field(() => DscCertificateInput, {
    nullable: true,
    description: '`dsc` signers only: pins the certificate they must sign with (added).',
  })
  dsc_certificate?: DscCertificateInput | null;

  @Field(() => String, { nullable: true, description: 'An uploaded asset (a face photo): enables face match.' })
  face_ref_file_id?: string | null;

  @Field(() => Float, { nullable: true, description: '50 to 100, default 80; only with face_ref_file_id.' })
  face_match_threshold?: number | null;

  @Field(() => Int, { nullable: true, description: '1 to 10, default 5; only with face_ref_file_id.' })
  face_max_attempts?: number | null;

  @Field(() => NotificationInput, { nullable: true })
  notification?: NotificationInput | null;

  @Field(() => Boolean, { nullable: true })
  verify_location?: boolean | null;

  @Field(() => String, { nullable: true, description: '`device` or `ip`.' })
  location_source?: string | null;

  @Field(() => Boolean, { nullable: true })
  enforce_geofence?: boolean | null;

  @Field(() => Float, { nullable: true })
  latitude?: number | null;

  @Field(() => Float, { nullable: true })
  longitude?: number | null;

  @Field(() => Float, { nullable: true, description: 'Metres.' })
  radius?: number | null;

  @Field(() => [ElementInput], { nullable: true })
  elements?: ElementInput[] | null;
}

@InputType('SignerInput')
export class SignerInput extends SignerLayoutInput {
  @Field(() => String, { nullable: true })
  full_name?: string | null;

  @Field(() => String, { nullable: true })
  email?: string | null;

  @Field(() => String, { nullable: true })
  mobile?: string | null;

  @Field(() => String, { nullable: true, description: 'Required when `mobile` is given, e.g. `91` or `+91`.' })
  country_code?: string | null;
}

/** The session-level part of a request, shared by initialize-esign and initialize-from-template. */
export interface SessionRequest {
  sign_type?: string | null;
  auth_mode?: number | null;
  file_id?: string | null;
  documents?: DocumentInput[] | null;
  folder?: string | null;
  expiry_seconds?: number | null;
  max_retry?: number | null;
  allow_download?: boolean | null;
  allow_delegation?: boolean | null;
  append_certificate?: boolean | null;
  signing_order?: string | null;
  reminder_interval_hours?: number | null;
  reminder_max?: number | null;
  redirect_url?: string | null;
  backend?: string | null;
  sender?: string | null;
  email_template_overrides?: EmailTemplateOverridesInput | null;
  stamp?: StampRequestInput | null;
  signers?: SignerInput[] | null;
}
