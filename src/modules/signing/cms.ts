/**
 * The cryptographic part of a PDF signature: a detached CMS SignedData (RFC 5652) as PAdES baseline B-B
 * (ETSI EN 319 142-1) wants it, and an in-process verification of one.
 *
 * Produced structure (DER):
 *   ContentInfo { id-signedData, [0] SignedData {
 *     version 1, digestAlgorithms { sha256 }, encapContentInfo { id-data } (no eContent: detached),
 *     certificates [0] { signer, chain... },
 *     signerInfos { SignerInfo { version 1, IssuerAndSerialNumber, sha256,
 *       signedAttrs [0] { content-type id-data, message-digest SHA-256(content),
 *                         signing-certificate-v2 { { ESSCertIDv2 { certHash, issuerSerial } } } },
 *       sha256WithRSAEncryption, signature } } } }
 * No signing-time attribute: PAdES carries the time in the signature dictionary (/M).
 *
 * The ASN.1 is written and read with the small DER codec of ./der.ts (Node's crypto does the RSA, hashing and
 * X.509): certificates and names are copied into the CMS byte for byte, and the verifier hashes the signed
 * attributes exactly as they were transmitted, with no decode/re-encode round trip that could alter them.
 *
 * The CMS verified comes from PDFs anyone can upload: parsing it refuses with `DerError` only (reported as a
 * "malformed CMS" problem; `verifyDetachedCms` never throws for any bytes), allocates no buffer larger than the
 * input, and its work grows linearly with the input (see der.ts and test/security/der-fuzz.test.ts).
 */
import { constants, createHash, createPrivateKey, createSign, createVerify, X509Certificate, type KeyObject } from 'node:crypto';
import {
  children,
  contentOf,
  der,
  DerError,
  derSetOf,
  expectTag,
  integer,
  oid,
  raw,
  readOid,
  readRoot,
  readTime,
  TAG,
  type Tlv,
} from './der';

export { DerError } from './der';

export interface SigningIdentity {
  privateKeyPem: string;
  certificatePem: string;
  chainPems: string[];
}

export interface CmsVerification {
  /** The RSA signature over the signed attributes verifies with the signer certificate. */
  signatureValid: boolean;
  /** The messageDigest attribute equals the digest of `content` (and the content-type attribute is id-data). */
  digestValid: boolean;
  /** RFC 4514 order, e.g. "CN=Asha Rao, ST=Karnataka, C=IN"; '' when the signer certificate is not in the CMS. */
  signerSubject: string;
  signerCertificatePem: string;
  /** Every certificate carried in the CMS. */
  certificatesPem: string[];
  /**
   * With `trustedRootsPem`: the signer chains (through carried certificates) to one of them, every link's signature
   * verifies and every certificate (root included) was valid at the signing time. null when no roots were given.
   * Revocation is not checked.
   */
  chainValid: boolean | null;
  /** The ESS signing-certificate-v2 attribute is present and its hash (and issuerSerial, if any) match the signer. */
  signingCertificateV2Valid: boolean;
  /** Human-readable reasons for any false above; empty when everything holds. */
  problems: string[];
}

export interface CmsVerifyOptions {
  /** Trust anchors for `chainValid`. */
  trustedRootsPem?: string[];
  /**
   * The signing time at which certificates must be valid (for PDF signatures: the /M of the signature dictionary).
   * Defaults to the CMS signing-time attribute when there is one, else to now.
   */
  at?: Date;
}

const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  sha256: '2.16.840.1.101.3.4.2.1',
  rsaEncryption: '1.2.840.113549.1.1.1',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
} as const;

const DIGEST_BY_OID: Readonly<Record<string, string>> = {
  [OID.sha256]: 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

const RSA_SIGNATURE_DIGEST_BY_OID: Readonly<Record<string, string>> = {
  [OID.sha256WithRSAEncryption]: 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
};

/**
 * At most this many certificates in one CMS: a signer and its chain are a handful, and with trust anchors the
 * chain search verifies up to (count squared) certificate signatures.
 */
export const MAX_CMS_CERTIFICATES = 32;

// ---------------------------------------------------------------------------------------------------------------
// Signing

interface SignerMaterial {
  key: KeyObject;
  certificates: Buffer[];
  issuer: Buffer;
  serial: Buffer;
  essCertIdV2: Buffer;
}

/**
 * Parsed keys and certificates of recent identities. Parsing a PEM key and its certificates costs more than the
 * RSA signature itself (about 0.6 ms against 0.35 ms), and the platform's identity signs every suresign.
 * Kept small: an owner's PFX identity stays only until a few others have signed after it.
 */
const recentMaterial = new Map<string, SignerMaterial>();
const RECENT_MATERIAL_LIMIT = 8;

function signerMaterial(identity: SigningIdentity): SignerMaterial {
  const cacheKey = createHash('sha256')
    .update(identity.privateKeyPem)
    .update('\0')
    .update(identity.certificatePem)
    .update('\0')
    .update(identity.chainPems.join('\0'))
    .digest('base64');
  const known = recentMaterial.get(cacheKey);
  if (known) {
    recentMaterial.delete(cacheKey); // most recently used last
    recentMaterial.set(cacheKey, known);
    return known;
  }
  const key = createPrivateKey(identity.privateKeyPem);
  if (key.asymmetricKeyType !== 'rsa')
    throw new Error(`signDetachedCms: the signing key must be RSA, not ${key.asymmetricKeyType}`);
  const signer = new X509Certificate(identity.certificatePem);
  if (!signer.checkPrivateKey(key)) throw new Error('signDetachedCms: the private key does not belong to the signer certificate');

  const signerDer = signer.raw;
  const certificates: Buffer[] = [];
  for (const der of [signerDer, ...identity.chainPems.map((pem) => new X509Certificate(pem).raw)]) {
    if (!certificates.some((known) => known.equals(der))) certificates.push(der);
  }
  const { issuer, serial } = issuerAndSerial(signerDer);

  // ESSCertIDv2 ::= SEQUENCE { hashAlgorithm DEFAULT sha256 (omitted), certHash, issuerSerial }
  // IssuerSerial ::= SEQUENCE { issuer GeneralNames (one directoryName [4]), serialNumber }
  const essCertIdV2 = der(
    TAG.sequence,
    der(TAG.octetString, hash('sha256', signerDer)),
    der(TAG.sequence, der(TAG.sequence, der(TAG.context4, issuer)), serial),
  );
  const material = { key, certificates, issuer, serial, essCertIdV2 };
  recentMaterial.set(cacheKey, material);
  if (recentMaterial.size > RECENT_MATERIAL_LIMIT) recentMaterial.delete(recentMaterial.keys().next().value!);
  return material;
}

/**
 * CMS SignedData (DER), detached, over `content` (the bytes a PDF ByteRange covers), given whole or as the
 * parts to hash in order (so that a large document's two ranges need not be copied into one buffer).
 */
export async function signDetachedCms(
  content: Uint8Array | readonly Uint8Array[],
  identity: SigningIdentity,
): Promise<Uint8Array> {
  const { key, certificates, issuer, serial, essCertIdV2 } = signerMaterial(identity);
  const signedAttrs = derSetOf(TAG.set, [
    attribute(OID.contentType, oid(OID.data)),
    attribute(OID.messageDigest, der(TAG.octetString, hashParts('sha256', content instanceof Uint8Array ? [content] : content))),
    attribute(OID.signingCertificateV2, der(TAG.sequence, der(TAG.sequence, essCertIdV2))),
  ]);
  // The signature covers the DER of the attributes as a SET OF (tag 0x31); in SignerInfo they are [0] IMPLICIT.
  const signature = createSign('sha256').update(signedAttrs).sign({ key, padding: constants.RSA_PKCS1_PADDING });
  const signedAttrsImplicit = Buffer.from(signedAttrs);
  signedAttrsImplicit[0] = TAG.context0;

  const signerInfo = der(
    TAG.sequence,
    integer(1),
    der(TAG.sequence, issuer, serial),
    algorithm(OID.sha256),
    signedAttrsImplicit,
    algorithm(OID.sha256WithRSAEncryption, der(TAG.null)),
    der(TAG.octetString, signature),
  );
  const signedData = der(
    TAG.sequence,
    integer(1),
    der(TAG.set, algorithm(OID.sha256)),
    der(TAG.sequence, oid(OID.data)),
    derSetOf(TAG.context0, certificates),
    der(TAG.set, signerInfo),
  );
  return der(TAG.sequence, oid(OID.signedData), der(TAG.context0, signedData));
}

// ---------------------------------------------------------------------------------------------------------------
// Verification

/**
 * Verifies a detached CMS SignedData with one SignerInfo against `content`. Never throws for a bad or malformed
 * CMS (that is reported in `problems`); trailing zero bytes after the CMS (the padding of a PDF /Contents) are
 * accepted.
 */
export async function verifyDetachedCms(
  cms: Uint8Array,
  content: Uint8Array,
  options: CmsVerifyOptions = {},
): Promise<CmsVerification> {
  const roots = options.trustedRootsPem?.map((pem) => new X509Certificate(pem));
  const result: CmsVerification = {
    signatureValid: false,
    digestValid: false,
    signerSubject: '',
    signerCertificatePem: '',
    certificatesPem: [],
    chainValid: roots ? false : null,
    signingCertificateV2Valid: false,
    problems: [],
  };
  try {
    verifyInto(result, parseSignedData(cms), asBuffer(content), roots, options.at);
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    result.problems.push(`malformed CMS: ${error.message}`);
  }
  return result;
}

/**
 * The parts of a SignedData that verification reads. Every Buffer is a view of the parsed input (`subarray`),
 * never a copy.
 */
export interface ParsedSignerInfo {
  /** The sid's issuer Name and serialNumber INTEGER (whole TLVs); null when the sid is a subjectKeyIdentifier. */
  issuer: Buffer | null;
  serial: Buffer | null;
  digestOid: string;
  /**
   * The signed attributes as transmitted ([0] IMPLICIT, whole TLV), or null when absent. The signature covers
   * them re-tagged as SET OF: tag 0x31, then `signedAttrs.subarray(1)`.
   */
  signedAttrs: Buffer | null;
  /** Each attribute's values (whole TLVs), by attribute type. */
  attributes: Map<string, Buffer[]>;
  signatureOid: string;
  signature: Buffer;
}

export interface ParsedSignedData {
  eContentType: string;
  certificates: X509Certificate[];
  signerInfo: ParsedSignerInfo;
}

/**
 * The parse step of `verifyDetachedCms`: a ContentInfo holding a SignedData with exactly one SignerInfo, followed
 * by nothing but zero bytes (the padding of a PDF /Contents). Any other bytes: `DerError`, and nothing else.
 */
export function parseSignedData(cms: Uint8Array): ParsedSignedData {
  const bytes = asBuffer(cms);
  const contentInfo = expectTag(readRoot(bytes), TAG.sequence, 'ContentInfo');
  if (bytes.subarray(contentInfo.end).some((byte) => byte !== 0)) throw new DerError('unexpected bytes after ContentInfo');
  const [contentType, explicit] = children(bytes, contentInfo);
  if (readOid(bytes, contentType) !== OID.signedData) throw new DerError('ContentInfo is not id-signedData');
  expectTag(explicit, TAG.context0, 'ContentInfo content');
  const signedData = expectTag(children(bytes, explicit)[0], TAG.sequence, 'SignedData');

  const parts = children(bytes, signedData);
  const encap = expectTag(parts[2], TAG.sequence, 'encapContentInfo');
  const eContentType = readOid(bytes, children(bytes, encap)[0]);
  const certificates: X509Certificate[] = [];
  const certificateSet = parts.find((part, index) => index > 2 && part.tag === TAG.context0);
  for (const certificate of certificateSet ? children(bytes, certificateSet) : []) {
    if (certificate.tag !== TAG.sequence) continue; // other CertificateChoices (attribute certificates...)
    if (certificates.length === MAX_CMS_CERTIFICATES) throw new DerError(`more than ${MAX_CMS_CERTIFICATES} certificates`);
    certificates.push(parseCertificate(raw(bytes, certificate)));
  }
  const signerInfos = expectTag(parts[parts.length - 1], TAG.set, 'signerInfos');
  const infos = children(bytes, signerInfos, 2);
  if (infos.length !== 1) throw new DerError(`expected exactly one SignerInfo, found ${infos.length}`);
  return { eContentType, certificates, signerInfo: parseSignerInfo(bytes, expectTag(infos[0], TAG.sequence, 'SignerInfo')) };
}

function parseSignerInfo(bytes: Buffer, signerInfo: Tlv): ParsedSignerInfo {
  const [, sid, digestAlgorithm, ...rest] = children(bytes, signerInfo);
  let issuer: Buffer | null = null;
  let serial: Buffer | null = null;
  if (sid?.tag === TAG.sequence) {
    const [issuerName, serialNumber] = children(bytes, sid);
    issuer = raw(bytes, expectTag(issuerName, TAG.sequence, 'sid issuer'));
    serial = raw(bytes, expectTag(serialNumber, TAG.integer, 'sid serialNumber'));
  }
  const digestOid = readOid(bytes, children(bytes, expectTag(digestAlgorithm, TAG.sequence, 'digestAlgorithm'))[0]);

  let signedAttrs: Buffer | null = null;
  const attributes = new Map<string, Buffer[]>();
  if (rest[0]?.tag === TAG.context0) {
    const attrs = rest.shift()!;
    signedAttrs = raw(bytes, attrs);
    for (const attr of children(bytes, attrs)) {
      const [type, values] = children(bytes, expectTag(attr, TAG.sequence, 'Attribute'));
      const typeOid = readOid(bytes, type);
      if (attributes.has(typeOid)) throw new DerError(`attribute ${typeOid} appears twice`);
      attributes.set(
        typeOid,
        children(bytes, expectTag(values, TAG.set, 'attribute values')).map((value) => raw(bytes, value)),
      );
    }
  }
  const [signatureAlgorithm, signature] = rest;
  const signatureOid = readOid(bytes, children(bytes, expectTag(signatureAlgorithm, TAG.sequence, 'signatureAlgorithm'))[0]);
  expectTag(signature, TAG.octetString, 'signature');
  return { issuer, serial, digestOid, signedAttrs, attributes, signatureOid, signature: contentOf(bytes, signature) };
}

function verifyInto(
  result: CmsVerification,
  parsed: ParsedSignedData,
  content: Buffer,
  roots: X509Certificate[] | undefined,
  at: Date | undefined,
): void {
  const { signerInfo: info, certificates } = parsed;
  const problems = result.problems;
  result.certificatesPem = certificates.map((certificate) => certificate.toString());

  // Digest: messageDigest attribute vs the content, plus the content-type binding RFC 5652 requires.
  const digestName = DIGEST_BY_OID[info.digestOid];
  const messageDigest = info.attributes.get(OID.messageDigest)?.[0];
  const contentType = info.attributes.get(OID.contentType)?.[0];
  if (!digestName) problems.push(`unsupported digest algorithm ${info.digestOid}`);
  else if (!info.signedAttrs) problems.push('no signed attributes, so no messageDigest (PAdES requires them)');
  else if (!messageDigest || messageDigest[0] !== TAG.octetString) problems.push('no messageDigest attribute');
  else if (!contentType || oidFromTlv(contentType) !== parsed.eContentType || parsed.eContentType !== OID.data)
    problems.push('the content-type attribute is missing or is not id-data');
  else {
    result.digestValid = contentOf(messageDigest, readRoot(messageDigest)).equals(hash(digestName, content));
    if (!result.digestValid) problems.push('messageDigest does not match the content (the signed bytes were changed)');
  }

  const signer =
    info.issuer && info.serial
      ? certificates.find((certificate) => matchesIssuerSerial(certificate, info.issuer!, info.serial!))
      : undefined;
  if (!signer) {
    problems.push(
      info.issuer
        ? 'the signer certificate (by issuer and serial number) is not among the carried certificates'
        : 'the signer is identified by subjectKeyIdentifier, which is not supported',
    );
    return;
  }
  result.signerSubject = formatName(signer.subject);
  result.signerCertificatePem = signer.toString();

  // Signature over the signed attributes (or, without them, over the content itself).
  const signatureDigest = info.signatureOid === OID.rsaEncryption ? digestName : RSA_SIGNATURE_DIGEST_BY_OID[info.signatureOid];
  const publicKey = publicKeyOf(signer);
  if (!signatureDigest) problems.push(`unsupported signature algorithm ${info.signatureOid}`);
  else if (!publicKey) problems.push('the public key of the signer certificate does not decode');
  else if (publicKey.asymmetricKeyType !== 'rsa') problems.push('the signer certificate does not hold an RSA key');
  else {
    try {
      const verifier = createVerify(signatureDigest);
      if (info.signedAttrs) verifier.update(SET_OF_TAG).update(info.signedAttrs.subarray(1));
      else verifier.update(content);
      result.signatureValid = verifier.verify({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, info.signature);
    } catch {
      result.signatureValid = false;
    }
    if (!result.signatureValid) problems.push('the signature does not verify with the signer certificate');
  }

  result.signingCertificateV2Valid = checkSigningCertificateV2(
    info.attributes.get(OID.signingCertificateV2)?.[0],
    signer.raw,
    problems,
  );

  if (roots) {
    const signingTime = info.attributes.get(OID.signingTime)?.[0];
    result.chainValid = checkChain(
      signer,
      certificates,
      roots,
      at ?? (signingTime ? readTime(signingTime) : new Date()),
      problems,
    );
  }
}

/** The tag the signed attributes have when signed (SET OF), instead of their [0] IMPLICIT in the SignerInfo. */
const SET_OF_TAG = Buffer.from([TAG.set]);

function checkSigningCertificateV2(value: Buffer | undefined, signerDer: Buffer, problems: string[]): boolean {
  if (!value) {
    problems.push('no signing-certificate-v2 attribute');
    return false;
  }
  try {
    const certs = expectTag(children(value, readRoot(value))[0], TAG.sequence, 'SigningCertificateV2 certs');
    const fields = children(value, expectTag(children(value, certs)[0], TAG.sequence, 'ESSCertIDv2'));
    let digestName: string | undefined = 'sha256';
    if (fields[0]?.tag === TAG.sequence) digestName = DIGEST_BY_OID[readOid(value, children(value, fields.shift()!)[0])];
    const certHash = expectTag(fields[0], TAG.octetString, 'certHash');
    if (!digestName || !contentOf(value, certHash).equals(hash(digestName, signerDer))) {
      problems.push('the signing-certificate-v2 hash does not match the signer certificate');
      return false;
    }
    if (fields[1]) {
      const [generalNames, serial] = children(value, expectTag(fields[1], TAG.sequence, 'issuerSerial'));
      const { issuer, serial: signerSerial } = issuerAndSerial(signerDer);
      const names = children(value, expectTag(generalNames, TAG.sequence, 'GeneralNames'));
      const issuerMatches = names.some((name) => name.tag === TAG.context4 && contentOf(value, name).equals(issuer));
      if (!issuerMatches || !raw(value, expectTag(serial, TAG.integer, 'serialNumber')).equals(signerSerial)) {
        problems.push('the signing-certificate-v2 issuerSerial does not match the signer certificate');
        return false;
      }
    }
    return true;
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    problems.push(`the signing-certificate-v2 attribute is malformed: ${error.message}`);
    return false;
  }
}

function checkChain(
  signer: X509Certificate,
  carried: X509Certificate[],
  roots: X509Certificate[],
  at: Date,
  problems: string[],
): boolean {
  const when = at.toISOString();
  const seen = new Set<string>();
  let current = signer;
  for (;;) {
    if (!validAt(current, at)) {
      problems.push(
        `certificate "${formatName(current.subject)}" was not valid at ${when} (${current.validFrom} to ${current.validTo})`,
      );
      return false;
    }
    if (roots.some((root) => root.raw.equals(current.raw))) return true;
    const root = roots.find((candidate) => issuedBy(current, candidate));
    if (root) {
      if (validAt(root, at)) return true;
      problems.push(`trusted root "${formatName(root.subject)}" was not valid at ${when} (${root.validFrom} to ${root.validTo})`);
      return false;
    }
    seen.add(current.fingerprint256);
    const issuer = carried.find((candidate) => !seen.has(candidate.fingerprint256) && issuedBy(current, candidate));
    if (!issuer) {
      problems.push(
        `the chain of "${formatName(signer.subject)}" does not reach a trusted root (it ends at "${formatName(current.subject)}")`,
      );
      return false;
    }
    if (!issuer.ca) {
      problems.push(`certificate "${formatName(issuer.subject)}" issued a certificate but is not a CA`);
      return false;
    }
    current = issuer;
  }
}

/** `issuer` issued `certificate` and signed it (false when its public key does not decode). */
function issuedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  if (!certificate.checkIssued(issuer)) return false;
  const key = publicKeyOf(issuer);
  try {
    return !!key && certificate.verify(key);
  } catch {
    return false;
  }
}

/**
 * The certificate's public key, or null when OpenSSL cannot decode it: it parses certificates without decoding
 * their key, so `X509Certificate.publicKey` throws ("decode error") for a carried certificate whose
 * SubjectPublicKeyInfo is damaged.
 */
function publicKeyOf(certificate: X509Certificate): KeyObject | null {
  try {
    return certificate.publicKey;
  } catch {
    return null;
  }
}

function validAt(certificate: X509Certificate, at: Date): boolean {
  return new Date(certificate.validFrom).getTime() <= at.getTime() && at.getTime() <= new Date(certificate.validTo).getTime();
}

/** Node prints a name one RDN a line, most significant first; RFC 4514 order is the reverse, comma-separated. */
function formatName(multiline: string | undefined): string {
  return (multiline ?? '').split('\n').reverse().join(', ');
}

function hash(algorithm: string, data: Uint8Array): Buffer {
  return createHash(algorithm).update(data).digest();
}

function hashParts(algorithm: string, parts: readonly Uint8Array[]): Buffer {
  const digest = createHash(algorithm);
  for (const part of parts) digest.update(part);
  return digest.digest();
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

// ---------------------------------------------------------------------------------------------------------------
// Certificates

/**
 * A certificate carried in a CMS, parsed by OpenSSL. Node's X509Certificate reads PEM before DER, and PEM text
 * may start anywhere in the buffer: a SEQUENCE whose contents are a PEM certificate would become that other
 * certificate, not the bytes every other verifier reads. Such a value is refused.
 */
function parseCertificate(bytes: Buffer): X509Certificate {
  if (bytes.includes(PEM_BEGIN)) throw new DerError('a carried certificate holds PEM text');
  try {
    return new X509Certificate(bytes);
  } catch (error) {
    throw new DerError(`a carried certificate does not parse: ${(error as Error).message}`);
  }
}

const PEM_BEGIN = Buffer.from('-----BEGIN', 'latin1');

/** The issuer Name and the serialNumber INTEGER (whole TLVs, as encoded) of a DER certificate. */
function issuerAndSerial(certificateDer: Buffer): { issuer: Buffer; serial: Buffer } {
  const certificate = expectTag(readRoot(certificateDer), TAG.sequence, 'Certificate');
  const tbs = children(certificateDer, expectTag(children(certificateDer, certificate)[0], TAG.sequence, 'tbsCertificate'));
  if (tbs[0]?.tag === TAG.context0) tbs.shift(); // [0] EXPLICIT version
  return {
    serial: raw(certificateDer, expectTag(tbs[0], TAG.integer, 'serialNumber')),
    issuer: raw(certificateDer, expectTag(tbs[2], TAG.sequence, 'issuer')),
  };
}

function matchesIssuerSerial(certificate: X509Certificate, issuer: Buffer, serial: Buffer): boolean {
  const own = issuerAndSerial(certificate.raw);
  return own.issuer.equals(issuer) && own.serial.equals(serial);
}

// ---------------------------------------------------------------------------------------------------------------
// CMS pieces written with the DER codec

/** AlgorithmIdentifier; parameters absent unless given (RFC 5754: absent for SHA-2, NULL for RSA). */
function algorithm(dotted: string, parameters?: Buffer): Buffer {
  return parameters ? der(TAG.sequence, oid(dotted), parameters) : der(TAG.sequence, oid(dotted));
}

function attribute(type: string, value: Buffer): Buffer {
  return der(TAG.sequence, oid(type), der(TAG.set, value));
}

function oidFromTlv(encoded: Buffer): string {
  return readOid(encoded, readRoot(encoded));
}
