/**
 * Aadhaar eSign certificates: the subject the sandbox ESP writes, and what the service reads from the certificate
 * any ESP returns (`aadhaar_cert_details`).
 *
 * An eSign certificate is issued by the ESP's CA from the holder's Aadhaar e-KYC, and the CCA's Interoperability
 * Guidelines for Digital Signature Certificates let each CA lay the subject out within the X.520 attributes:
 * the holder's name in CN, C=IN, the state (ST) and PIN (postalCode) of the e-KYC address, a unique identifier of
 * the holder in pseudonym (a hash or token derived from the Aadhaar number, never the number), often a hash or the
 * masked number in serialNumber, and year of birth and gender where the CA chooses (seen in description, in
 * dnQualifier, in the sandbox in pseudonym). No O is required of an individual's certificate. So the reading is
 * by attribute and by recognised value forms, never by one CA's layout, and a detail the subject does not carry
 * in a recognised form is null (see `readAadhaarCertDetails`).
 */
import { NAME_OID, subjectAttributes, type SubjectFields } from './certificates';

// ---------------------------------------------------------------------------------------------------------------
// The sandbox ESP's profile

/**
 * The identity the sandbox ESP puts into an Aadhaar eSign certificate (what Aadhaar e-KYC returns, minus the
 * full number).
 *
 * Subject profile (DER order, most general first). It uses the attributes Indian eSign certificates carry
 * (C=IN, state, postal code, O=Personal, serialNumber, pseudonym) but is this sandbox's own: it is not a copy of any
 * real ESP's profile, and it holds the values in the clear so that `aadhaar_cert_details` can be read back:
 *
 * | attribute (OID)          | type            | value                                   | example               |
 * |--------------------------|-----------------|-----------------------------------------|-----------------------|
 * | C  countryName (2.5.4.6) | PrintableString | always `IN`                             | `IN`                  |
 * | ST stateOrProvinceName   | UTF8String      | `state` as given                        | `Karnataka`           |
 * | postalCode (2.5.4.17)    | UTF8String      | `pinCode`, 6 digits                     | `560001`              |
 * | O  organizationName      | UTF8String      | always `Personal` (an individual)       | `Personal`            |
 * | pseudonym (2.5.4.65)     | UTF8String      | `YOB:<yearOfBirth>;G:<gender>`          | `YOB:1990;G:M`        |
 * | serialNumber (2.5.4.5)   | PrintableString | `XXXXXXXX` + `aadhaarLast4` (masked)    | `XXXXXXXX1234`        |
 * | CN commonName (2.5.4.3)  | UTF8String      | `name` exactly as given                 | `José Kumar`          |
 *
 * The full Aadhaar number is never put into a certificate.
 */
export interface AadhaarIdentity {
  name: string;
  state: string;
  /** Six-digit Indian postal index number. */
  pinCode: string;
  /** Four digits, e.g. "1990". */
  yearOfBirth: string;
  /** M(ale), F(emale) or T(ransgender), as UIDAI records it. */
  gender: 'M' | 'F' | 'T';
  /** The last four digits of the Aadhaar number. */
  aadhaarLast4: string;
}

export const AADHAAR_ORGANIZATION = 'Personal';
const PIN_CODE = /^[1-9][0-9]{5}$/;

/** The subject of the sandbox ESP's Aadhaar eSign certificate for `identity` (profile: see `AadhaarIdentity`). */
export function aadhaarSubject(identity: AadhaarIdentity): SubjectFields {
  const { name, state, pinCode, yearOfBirth, gender, aadhaarLast4 } = identity;
  if (typeof name !== 'string' || name.trim() === '') throw new RangeError('aadhaar identity: name is required');
  if (typeof state !== 'string' || state.trim() === '') throw new RangeError('aadhaar identity: state is required');
  if (!PIN_CODE.test(pinCode)) throw new RangeError('aadhaar identity: pinCode must be 6 digits');
  if (!/^[0-9]{4}$/.test(yearOfBirth)) throw new RangeError('aadhaar identity: yearOfBirth must be 4 digits');
  if (gender !== 'M' && gender !== 'F' && gender !== 'T') throw new RangeError('aadhaar identity: gender must be M, F or T');
  if (!/^[0-9]{4}$/.test(aadhaarLast4)) throw new RangeError('aadhaar identity: aadhaarLast4 must be 4 digits');
  return {
    country: 'IN',
    state,
    postalCode: pinCode,
    organization: AADHAAR_ORGANIZATION,
    pseudonym: `YOB:${yearOfBirth};G:${gender}`,
    serialNumber: `XXXXXXXX${aadhaarLast4}`,
    commonName: name,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Reading any ESP's certificate

/** What an Aadhaar eSign certificate says of its holder; each detail null when the subject does not carry it. */
export interface AadhaarCertDetails {
  /** CN. */
  name: string | null;
  /** C, two letters. */
  country: string | null;
  /** ST. */
  state: string | null;
  /** postalCode, when it is a six-digit PIN. */
  pin_code: string | null;
  /** The masked number: "XXXXXXXX" and the last four digits. */
  aadhaar: string | null;
  /** Four digits. */
  year_of_birth: string | null;
  /** M, F or T. */
  gender: 'M' | 'F' | 'T' | null;
}

/** Attributes where a CA may put the masked number, year of birth or gender (never the name or address ones). */
const DETAIL_ATTRIBUTES = [
  NAME_OID.pseudonym,
  NAME_OID.serialNumber,
  NAME_OID.description,
  NAME_OID.dnQualifier,
  NAME_OID.title,
] as const;

/**
 * The masked Aadhaar number as a value or a token of one: eight mask characters (X, x or *), in groups of four
 * or not, then the last four digits ("XXXXXXXX1234", "XXXX XXXX 1234", "xxxx-xxxx-1234", "UID:********1234").
 * A hash (hex) never has a mask character, so it is never read as a number.
 */
const MASKED_AADHAAR = /(?:^|[^A-Za-z0-9*])[Xx*]{4}[ -]?[Xx*]{4}[ -]?([0-9]{4})(?![A-Za-z0-9])/g;
/** A labelled year of birth: "YOB:1990", "YOB=1990", "YOB 1990", "Year of Birth: 1990", "BirthYear=1990". */
const LABELLED_YEAR = /(?:^|[^A-Za-z])(?:YOB|YEAR[ _]?OF[ _]?BIRTH|BIRTH[ _]?YEAR)(?:\s*[:=]\s*|\s+)([0-9]{4})(?![0-9])/gi;
/** A labelled gender: "G:M", "Gender:F", "Gender = Female", "Gender M", "Sex:T". */
const LABELLED_GENDER = /(?:^|[^A-Za-z])(?:GENDER|SEX|G)(?:\s*[:=]\s*|\s+)(MALE|FEMALE|TRANSGENDER|M|F|T)(?![A-Za-z])/gi;
/** dnQualifier led by year of birth and gender ("1990M...", as some CAs write it). */
const DN_QUALIFIER_YEAR_GENDER = /^([0-9]{4})([MFT])/i;

/**
 * `aadhaar_cert_details` of any ESP's Aadhaar eSign certificate, read for what its subject carries (each value
 * trimmed; an attribute that occurs more than once, or values that disagree, give null):
 * - `name` from CN, `country` from C (two letters), `state` from ST, `pin_code` from postalCode (six digits, spaces
 *   ignored);
 * - `aadhaar`, the masked number (`XXXXXXXX` + last four digits), from pseudonym, serialNumber, description,
 *   dnQualifier or title when one holds it in a masked form (see MASKED_AADHAAR); a hash stays unread;
 * - `year_of_birth` and `gender` from those attributes when labelled ("YOB:1990;G:M", "YOB:1990 Gender:M",
 *   "Year of Birth=1990, Gender=Female"), or from a dnQualifier that starts with them ("1990M..."). A year before
 *   1900 or after this year is not one.
 * Throws when `certificatePem` is not a certificate.
 */
export function readAadhaarCertDetails(certificatePem: string): AadhaarCertDetails {
  const values = new Map<string, string[]>();
  for (const { type, value } of subjectAttributes(certificatePem)) {
    const trimmed = value.trim();
    if (trimmed) values.set(type, [...(values.get(type) ?? []), trimmed]);
  }
  const one = (type: string) => {
    const found = values.get(type);
    return found?.length === 1 ? found[0]! : null;
  };
  const country = one(NAME_OID.country);
  const pinCode = one(NAME_OID.postalCode)?.replace(/\s+/g, '') ?? null;

  const masked: string[] = [];
  const years: string[] = [];
  const genders: string[] = [];
  for (const type of DETAIL_ATTRIBUTES) {
    for (const value of values.get(type) ?? []) {
      for (const match of value.matchAll(MASKED_AADHAAR)) masked.push(`XXXXXXXX${match[1]}`);
      for (const match of value.matchAll(LABELLED_YEAR)) years.push(match[1]!);
      for (const match of value.matchAll(LABELLED_GENDER)) genders.push(match[1]!.slice(0, 1).toUpperCase());
      const compact = type === NAME_OID.dnQualifier ? DN_QUALIFIER_YEAR_GENDER.exec(value) : null;
      if (compact) {
        years.push(compact[1]!);
        genders.push(compact[2]!.toUpperCase());
      }
    }
  }
  const year = agreed(years);
  return {
    name: one(NAME_OID.commonName),
    country: country && /^[A-Za-z]{2}$/.test(country) ? country.toUpperCase() : null,
    state: one(NAME_OID.state),
    pin_code: pinCode && PIN_CODE.test(pinCode) ? pinCode : null,
    aadhaar: agreed(masked),
    year_of_birth: year && Number(year) >= 1900 && Number(year) <= new Date().getUTCFullYear() ? year : null,
    gender: agreed(genders) as AadhaarCertDetails['gender'],
  };
}

/** The one value every source gives, or null (none, or they disagree). */
function agreed(found: string[]): string | null {
  return found.length > 0 && found.every((value) => value === found[0]) ? found[0]! : null;
}
