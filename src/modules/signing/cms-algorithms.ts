/**
 * The object identifiers a PAdES CMS names (content types, signed attributes, digest and signature algorithms)
 * and hashing by Node's algorithm name: what signing (cms-sign.ts), parsing (cms-parse.ts) and verifying
 * (cms-verify.ts) a CMS share.
 */
import { createHash } from 'node:crypto';

export const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  /** RFC 3161: the content type of a time-stamp token's TSTInfo. */
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  /** RFC 3161 appendix A: the unsigned attribute holding a time-stamp token over the signature value. */
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  /** RFC 5280: the extended key usage a time-stamping authority's certificate must carry (alone, critical). */
  timeStamping: '1.3.6.1.5.5.7.3.8',
  sha256: '2.16.840.1.101.3.4.2.1',
  rsaEncryption: '1.2.840.113549.1.1.1',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
} as const;

/** Node's name of each digest algorithm a verified CMS may use. */
export const DIGEST_BY_OID: Readonly<Record<string, string>> = {
  [OID.sha256]: 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/** The digest of each RSA signature algorithm a verified CMS may use. */
export const RSA_SIGNATURE_DIGEST_BY_OID: Readonly<Record<string, string>> = {
  [OID.sha256WithRSAEncryption]: 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
};

export function hash(algorithm: string, data: Uint8Array): Buffer {
  return createHash(algorithm).update(data).digest();
}

export function hashParts(algorithm: string, parts: readonly Uint8Array[]): Buffer {
  const digest = createHash(algorithm);
  for (const part of parts) digest.update(part);
  return digest.digest();
}
