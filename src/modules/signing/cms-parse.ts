/**
 * Reading a CMS SignedData (RFC 5652) into the parts verification needs (cms-verify.ts), with the small DER codec
 * of ./der.ts: the signed attributes are kept exactly as transmitted, so the verifier hashes them with no
 * decode/re-encode round trip that could alter them.
 *
 * The CMS read comes from PDFs anyone can upload: parsing it refuses with `DerError` only, allocates no buffer
 * larger than the input, and its work grows linearly with the input (see der.ts and
 * test/security/der-fuzz.test.ts).
 */
import { X509Certificate } from 'node:crypto';
import { OID } from './cms-algorithms';
import { children, contentOf, DerError, expectTag, raw, readOid, readRoot, TAG, type Tlv } from './der';

/**
 * At most this many certificates in one CMS: a signer and its chain are a handful, and with trust anchors the
 * chain search verifies up to (count squared) certificate signatures.
 */
export const MAX_CMS_CERTIFICATES = 32;
const CONSTRUCTED_OCTET_STRING = 0x24;

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
  /** Each unsigned attribute's values (whole TLVs), by type: a signature time-stamp token travels here. */
  unsignedAttributes: Map<string, Buffer[]>;
}

export interface ParsedSignedData {
  eContentType: string;
  /** The encapsulated content (a time-stamp token's TSTInfo); null for a detached signature. */
  eContent: Buffer | null;
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
  const [eContentTypeTlv, eContentExplicit] = children(bytes, encap);
  const eContentType = readOid(bytes, eContentTypeTlv);
  let eContent: Buffer | null = null;
  if (eContentExplicit) {
    const octets = children(bytes, expectTag(eContentExplicit, TAG.context0, 'eContent'))[0];
    // BER (a streaming signer): a constructed OCTET STRING, its content in primitive pieces.
    if (octets?.tag === CONSTRUCTED_OCTET_STRING) {
      const pieces = children(bytes, octets).map((piece) =>
        contentOf(bytes, expectTag(piece, TAG.octetString, 'eContent piece')),
      );
      eContent = Buffer.concat(pieces);
    } else eContent = contentOf(bytes, expectTag(octets, TAG.octetString, 'eContent'));
  }
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
  return {
    eContentType,
    eContent,
    certificates,
    signerInfo: parseSignerInfo(bytes, expectTag(infos[0], TAG.sequence, 'SignerInfo')),
  };
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
  const [signatureAlgorithm, signature, unsigned] = rest;
  const signatureOid = readOid(bytes, children(bytes, expectTag(signatureAlgorithm, TAG.sequence, 'signatureAlgorithm'))[0]);
  expectTag(signature, TAG.octetString, 'signature');
  const unsignedAttributes = new Map<string, Buffer[]>();
  if (unsigned?.tag === TAG.context1) {
    for (const attr of children(bytes, unsigned)) {
      const [type, values] = children(bytes, expectTag(attr, TAG.sequence, 'unsigned Attribute'));
      const typeOid = readOid(bytes, type);
      const found = children(bytes, expectTag(values, TAG.set, 'attribute values')).map((value) => raw(bytes, value));
      unsignedAttributes.set(typeOid, [...(unsignedAttributes.get(typeOid) ?? []), ...found]);
    }
  }
  return {
    issuer,
    serial,
    digestOid,
    signedAttrs,
    attributes,
    signatureOid,
    signature: contentOf(bytes, signature),
    unsignedAttributes,
  };
}

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

/**
 * The issuer Name and the serialNumber INTEGER (whole TLVs, as encoded) of a DER certificate: how a SignerInfo
 * and the signing-certificate-v2 attribute name the signer.
 */
export function issuerAndSerial(certificateDer: Buffer): { issuer: Buffer; serial: Buffer } {
  const certificate = expectTag(readRoot(certificateDer), TAG.sequence, 'Certificate');
  const tbs = children(certificateDer, expectTag(children(certificateDer, certificate)[0], TAG.sequence, 'tbsCertificate'));
  if (tbs[0]?.tag === TAG.context0) tbs.shift(); // [0] EXPLICIT version
  return {
    serial: raw(certificateDer, expectTag(tbs[0], TAG.integer, 'serialNumber')),
    issuer: raw(certificateDer, expectTag(tbs[2], TAG.sequence, 'issuer')),
  };
}

/** The bytes as a Buffer: a view, never a copy. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
