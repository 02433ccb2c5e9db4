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
 * The ASN.1 is written and read with the small DER codec below (Node's crypto does the RSA, hashing and
 * X.509): certificates and names are copied into the CMS byte for byte, and the verifier hashes the signed
 * attributes exactly as they were transmitted, with no decode/re-encode round trip that could alter them.
 */
import { constants, createHash, createPrivateKey, createSign, createVerify, X509Certificate, type KeyObject } from 'node:crypto';

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

const TAG = {
  integer: 0x02,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
  context0: 0xa0,
  context4: 0xa4,
} as const;

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
    verifyInto(result, parseSignedData(asBuffer(cms)), asBuffer(content), roots, options.at);
  } catch (error) {
    if (!(error instanceof CmsFormatError)) throw error;
    result.problems.push(`malformed CMS: ${error.message}`);
  }
  return result;
}

class CmsFormatError extends Error {}

interface ParsedSignerInfo {
  issuer: Buffer | null;
  serial: Buffer | null;
  digestOid: string;
  /** The signed attributes re-tagged as SET OF (what the signature covers), or null when absent. */
  signedAttrs: Buffer | null;
  attributes: Map<string, Buffer[]>;
  signatureOid: string;
  signature: Buffer;
}

interface ParsedSignedData {
  eContentType: string;
  certificates: X509Certificate[];
  signerInfo: ParsedSignerInfo;
}

function parseSignedData(bytes: Buffer): ParsedSignedData {
  const contentInfo = expectTag(readTlv(bytes, 0, bytes.length), TAG.sequence, 'ContentInfo');
  if (bytes.subarray(contentInfo.end).some((byte) => byte !== 0)) throw new CmsFormatError('unexpected bytes after ContentInfo');
  const [contentType, explicit] = children(bytes, contentInfo);
  if (readOid(bytes, contentType) !== OID.signedData) throw new CmsFormatError('ContentInfo is not id-signedData');
  expectTag(explicit, TAG.context0, 'ContentInfo content');
  const signedData = expectTag(children(bytes, explicit)[0], TAG.sequence, 'SignedData');

  const parts = children(bytes, signedData);
  const encap = expectTag(parts[2], TAG.sequence, 'encapContentInfo');
  const eContentType = readOid(bytes, children(bytes, encap)[0]);
  const certificates: X509Certificate[] = [];
  const certificateSet = parts.find((part, index) => index > 2 && part.tag === TAG.context0);
  for (const certificate of certificateSet ? children(bytes, certificateSet) : []) {
    if (certificate.tag !== TAG.sequence) continue; // other CertificateChoices (attribute certificates...)
    try {
      certificates.push(new X509Certificate(raw(bytes, certificate)));
    } catch (error) {
      throw new CmsFormatError(`a carried certificate does not parse: ${(error as Error).message}`);
    }
  }
  const signerInfos = expectTag(parts[parts.length - 1], TAG.set, 'signerInfos');
  const infos = children(bytes, signerInfos);
  if (infos.length !== 1) throw new CmsFormatError(`expected exactly one SignerInfo, found ${infos.length}`);
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
    signedAttrs = Buffer.from(raw(bytes, attrs));
    signedAttrs[0] = TAG.set;
    for (const attr of children(bytes, attrs)) {
      const [type, values] = children(bytes, expectTag(attr, TAG.sequence, 'Attribute'));
      const typeOid = readOid(bytes, type);
      if (attributes.has(typeOid)) throw new CmsFormatError(`attribute ${typeOid} appears twice`);
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
    result.digestValid = contentOf(messageDigest, readTlv(messageDigest, 0, messageDigest.length)).equals(
      hash(digestName, content),
    );
    if (!result.digestValid) problems.push('messageDigest does not match the content (the signed bytes were changed)');
  }

  const signer =
    info.issuer && info.serial
      ? certificates.find((certificate) => matchesIssuerSerial(certificate.raw, info.issuer!, info.serial!))
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
  if (!signatureDigest) problems.push(`unsupported signature algorithm ${info.signatureOid}`);
  else if (signer.publicKey.asymmetricKeyType !== 'rsa') problems.push('the signer certificate does not hold an RSA key');
  else {
    try {
      result.signatureValid = createVerify(signatureDigest)
        .update(info.signedAttrs ?? content)
        .verify({ key: signer.publicKey, padding: constants.RSA_PKCS1_PADDING }, info.signature);
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

function checkSigningCertificateV2(value: Buffer | undefined, signerDer: Buffer, problems: string[]): boolean {
  if (!value) {
    problems.push('no signing-certificate-v2 attribute');
    return false;
  }
  try {
    const certs = expectTag(children(value, readTlv(value, 0, value.length))[0], TAG.sequence, 'SigningCertificateV2 certs');
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
    if (!(error instanceof CmsFormatError)) throw error;
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
    const root = roots.find((candidate) => current.checkIssued(candidate) && current.verify(candidate.publicKey));
    if (root) {
      if (validAt(root, at)) return true;
      problems.push(`trusted root "${formatName(root.subject)}" was not valid at ${when} (${root.validFrom} to ${root.validTo})`);
      return false;
    }
    seen.add(current.fingerprint256);
    const issuer = carried.find(
      (candidate) => !seen.has(candidate.fingerprint256) && current.checkIssued(candidate) && current.verify(candidate.publicKey),
    );
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

function validAt(certificate: X509Certificate, at: Date): boolean {
  return new Date(certificate.validFrom).getTime() <= at.getTime() && at.getTime() <= new Date(certificate.validTo).getTime();
}

/** Node prints a name one RDN a line, most significant first; RFC 4514 order is the reverse, comma-separated. */
function formatName(multiline: string): string {
  return multiline.split('\n').reverse().join(', ');
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

/** The issuer Name and the serialNumber INTEGER (whole TLVs, as encoded) of a DER certificate. */
function issuerAndSerial(certificateDer: Buffer): { issuer: Buffer; serial: Buffer } {
  const certificate = readTlv(certificateDer, 0, certificateDer.length);
  const tbs = children(certificateDer, children(certificateDer, certificate)[0]);
  if (tbs[0].tag === TAG.context0) tbs.shift(); // [0] EXPLICIT version
  return { serial: raw(certificateDer, tbs[0]), issuer: raw(certificateDer, tbs[2]) };
}

function matchesIssuerSerial(certificateDer: Buffer, issuer: Buffer, serial: Buffer): boolean {
  const own = issuerAndSerial(certificateDer);
  return own.issuer.equals(issuer) && own.serial.equals(serial);
}

// ---------------------------------------------------------------------------------------------------------------
// A minimal DER writer

function der(tag: number, ...content: Uint8Array[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

/** A SET OF in DER: the element encodings in ascending byte order (X.690 11.6). */
function derSetOf(tag: number, elements: Buffer[]): Buffer {
  return der(tag, ...[...elements].sort(Buffer.compare));
}

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function integer(value: number): Buffer {
  if (!Number.isInteger(value) || value < 0 || value > 0x7f)
    throw new RangeError('integer() writes small non-negative values only');
  return der(TAG.integer, Buffer.from([value]));
}

function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const bytes: number[] = [];
  for (const arc of [arcs[0] * 40 + arcs[1], ...arcs.slice(2)]) {
    const group = [arc % 128];
    for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128)) group.unshift(0x80 | (rest % 128));
    bytes.push(...group);
  }
  return der(TAG.oid, Buffer.from(bytes));
}

/** AlgorithmIdentifier; parameters absent unless given (RFC 5754: absent for SHA-2, NULL for RSA). */
function algorithm(dotted: string, parameters?: Buffer): Buffer {
  return parameters ? der(TAG.sequence, oid(dotted), parameters) : der(TAG.sequence, oid(dotted));
}

function attribute(type: string, value: Buffer): Buffer {
  return der(TAG.sequence, oid(type), der(TAG.set, value));
}

// ---------------------------------------------------------------------------------------------------------------
// A minimal DER (and BER definite/indefinite length) reader that keeps byte offsets

interface Tlv {
  tag: number;
  start: number;
  contentStart: number;
  contentEnd: number;
  end: number;
}

function readTlv(bytes: Buffer, position: number, limit: number, depth = 0): Tlv {
  if (depth > 64) throw new CmsFormatError('nested too deeply');
  if (position + 2 > limit) throw new CmsFormatError('truncated');
  const tag = bytes[position];
  if ((tag & 0x1f) === 0x1f) throw new CmsFormatError('high tag numbers are not supported');
  let cursor = position + 1;
  const first = bytes[cursor++];
  if (first === 0x80) {
    if (!(tag & 0x20)) throw new CmsFormatError('indefinite length on a primitive value');
    for (let child = cursor; ; child = readTlv(bytes, child, limit, depth + 1).end) {
      if (child + 2 > limit) throw new CmsFormatError('truncated indefinite-length value');
      if (bytes[child] === 0 && bytes[child + 1] === 0)
        return { tag, start: position, contentStart: cursor, contentEnd: child, end: child + 2 };
    }
  }
  let length = first;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count > 4 || cursor + count > limit) throw new CmsFormatError('bad length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[cursor++];
  }
  if (cursor + length > limit) throw new CmsFormatError('truncated');
  return { tag, start: position, contentStart: cursor, contentEnd: cursor + length, end: cursor + length };
}

function children(bytes: Buffer, parent: Tlv): Tlv[] {
  if (!(parent.tag & 0x20)) throw new CmsFormatError(`expected a constructed value, found tag 0x${parent.tag.toString(16)}`);
  const list: Tlv[] = [];
  for (let position = parent.contentStart; position < parent.contentEnd;) {
    const child = readTlv(bytes, position, parent.contentEnd);
    list.push(child);
    position = child.end;
  }
  return list;
}

function expectTag(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (!tlv) throw new CmsFormatError(`${what} is missing`);
  if (tlv.tag !== tag) throw new CmsFormatError(`${what}: expected tag 0x${tag.toString(16)}, found 0x${tlv.tag.toString(16)}`);
  return tlv;
}

function raw(bytes: Buffer, tlv: Tlv): Buffer {
  return bytes.subarray(tlv.start, tlv.end);
}

function contentOf(bytes: Buffer, tlv: Tlv): Buffer {
  return bytes.subarray(tlv.contentStart, tlv.contentEnd);
}

function readOid(bytes: Buffer, tlv: Tlv | undefined): string {
  const value = contentOf(bytes, expectTag(tlv, TAG.oid, 'OBJECT IDENTIFIER'));
  const arcs: number[] = [];
  let arc = 0;
  for (const byte of value) {
    arc = arc * 128 + (byte & 0x7f);
    if (byte & 0x80) continue;
    if (arcs.length === 0) arcs.push(arc < 80 ? Math.floor(arc / 40) : 2, arc < 80 ? arc % 40 : arc - 80);
    else arcs.push(arc);
    arc = 0;
  }
  if (value.length === 0 || value[value.length - 1] & 0x80) throw new CmsFormatError('bad OBJECT IDENTIFIER');
  return arcs.join('.');
}

function oidFromTlv(encoded: Buffer): string {
  return readOid(encoded, readTlv(encoded, 0, encoded.length));
}

/** A signing-time value: UTCTime (YYMMDDHHMMSSZ) or GeneralizedTime (YYYYMMDDHHMMSS[.f]Z). */
function readTime(encoded: Buffer): Date {
  const tlv = readTlv(encoded, 0, encoded.length);
  const text = contentOf(encoded, tlv).toString('latin1');
  const match =
    tlv.tag === TAG.utcTime
      ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
      : tlv.tag === TAG.generalizedTime
        ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d+)?Z$/.exec(text)
        : null;
  if (!match) throw new CmsFormatError(`bad signing-time ${JSON.stringify(text)}`);
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number);
  const fullYear = tlv.tag === TAG.utcTime ? (year < 50 ? 2000 + year : 1900 + year) : year;
  return new Date(Date.UTC(fullYear, month - 1, day, hour, minute, second));
}
