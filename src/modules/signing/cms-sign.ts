/**
 * The cryptographic part of a PDF signature: a detached CMS SignedData (RFC 5652) as PAdES baseline B-B
 * (ETSI EN 319 142-1) wants it.
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
 * The ASN.1 is written with the small DER codec of ./der.ts (Node's crypto does the RSA, hashing and X.509):
 * certificates and names are copied into the CMS byte for byte.
 */
import { constants, createHash, createPrivateKey, createSign, X509Certificate, type KeyObject } from 'node:crypto';
import { hash, hashParts, OID } from './cms-algorithms';
import { issuerAndSerial } from './cms-parse';
import { der, derSetOf, integer, oid, TAG } from './der';

export interface SigningIdentity {
  privateKeyPem: string;
  certificatePem: string;
  chainPems: string[];
}

/**
 * CMS SignedData (DER), detached, over `content` (the bytes a PDF ByteRange covers), given whole or as the
 * parts to hash in order (so that a large document's two ranges need not be copied into one buffer).
 */
export async function signDetachedCms(
  content: Uint8Array | readonly Uint8Array[],
  identity: SigningIdentity,
): Promise<Uint8Array> {
  return signedData(identity, OID.data, hashParts('sha256', content instanceof Uint8Array ? [content] : content));
}

/**
 * The same detached CMS, made from the content's SHA-256 computed elsewhere: what an eSign Service Provider signs,
 * since the CCA eSign API hands it the document hash, never the document (messageDigest = `digest`).
 */
export function signDetachedCmsOverDigest(digest: Uint8Array, identity: SigningIdentity): Uint8Array {
  if (digest.length !== 32) throw new RangeError('signDetachedCmsOverDigest: a SHA-256 digest is 32 bytes');
  return signedData(identity, OID.data, Buffer.from(digest));
}

/**
 * CMS SignedData (DER) that carries its content, of type `contentType`: what a time-stamp token is (a TSTInfo
 * signed by the TSA). RFC 5652 5.1: version 3, since the content is not id-data.
 */
export function signEncapsulatedCms(
  content: Buffer,
  contentType: string,
  identity: SigningIdentity,
  options: { certificates: boolean } = { certificates: true },
): Buffer {
  return signedData(identity, contentType, hash('sha256', content), content, options.certificates);
}

function signedData(
  identity: SigningIdentity,
  contentType: string,
  digest: Buffer,
  encapsulated?: Buffer,
  withCertificates = true,
): Buffer {
  const { key, certificates, issuer, serial, essCertIdV2 } = signerMaterial(identity);
  const signedAttrs = signedAttributes(contentType, digest, essCertIdV2);
  const signature = createSign('sha256').update(signedAttrs).sign({ key, padding: constants.RSA_PKCS1_PADDING });
  return assembleSignedData({
    contentType,
    signedAttrs,
    signature,
    issuer,
    serial,
    certificates,
    encapsulated,
    withCertificates,
  });
}

/**
 * The signed attributes as the signature covers them: DER of a SET OF (tag 0x31) with content-type, message-digest
 * (`digest`, the content's SHA-256) and signing-certificate-v2. Deterministic: the same certificate and digest give
 * the same bytes, so a signature made elsewhere (a DSC token) can be checked against them later.
 */
export function signedAttributes(contentType: string, digest: Buffer, essCertIdV2: Buffer): Buffer {
  return derSetOf(TAG.set, [
    attribute(OID.contentType, oid(contentType)),
    attribute(OID.messageDigest, der(TAG.octetString, digest)),
    attribute(OID.signingCertificateV2, der(TAG.sequence, der(TAG.sequence, essCertIdV2))),
  ]);
}

/** SignedData around one SignerInfo (sha256WithRSAEncryption) whose signature over `signedAttrs` is given. */
export function assembleSignedData(parts: {
  contentType: string;
  signedAttrs: Buffer;
  signature: Buffer;
  issuer: Buffer;
  serial: Buffer;
  certificates: Buffer[];
  encapsulated?: Buffer;
  withCertificates?: boolean;
}): Buffer {
  const { contentType, encapsulated } = parts;
  // The signature covers the DER of the attributes as a SET OF (tag 0x31); in SignerInfo they are [0] IMPLICIT.
  const signedAttrsImplicit = Buffer.from(parts.signedAttrs);
  signedAttrsImplicit[0] = TAG.context0;
  const signerInfo = der(
    TAG.sequence,
    integer(1),
    der(TAG.sequence, parts.issuer, parts.serial),
    algorithm(OID.sha256),
    signedAttrsImplicit,
    algorithm(OID.sha256WithRSAEncryption, der(TAG.null)),
    der(TAG.octetString, parts.signature),
  );
  const encapContentInfo = encapsulated
    ? der(TAG.sequence, oid(contentType), der(TAG.context0, der(TAG.octetString, encapsulated)))
    : der(TAG.sequence, oid(contentType));
  const signed = der(
    TAG.sequence,
    integer(contentType === OID.data ? 1 : 3),
    der(TAG.set, algorithm(OID.sha256)),
    encapContentInfo,
    ...(parts.withCertificates === false ? [] : [derSetOf(TAG.context0, parts.certificates)]),
    der(TAG.set, signerInfo),
  );
  return der(TAG.sequence, oid(OID.signedData), der(TAG.context0, signed));
}

// ---------------------------------------------------------------------------------------------------------------
// The signer's key and certificates, parsed once for a few signatures

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
  const { issuer, serial, essCertIdV2 } = certificateParts(signerDer);
  const material = { key, certificates, issuer, serial, essCertIdV2 };
  recentMaterial.set(cacheKey, material);
  if (recentMaterial.size > RECENT_MATERIAL_LIMIT) recentMaterial.delete(recentMaterial.keys().next().value!);
  return material;
}

/** What a SignerInfo says of its certificate: issuer and serial, and the ESSCertIDv2 of signing-certificate-v2. */
export function certificateParts(signerDer: Buffer): { issuer: Buffer; serial: Buffer; essCertIdV2: Buffer } {
  const { issuer, serial } = issuerAndSerial(signerDer);
  // ESSCertIDv2 ::= SEQUENCE { hashAlgorithm DEFAULT sha256 (omitted), certHash, issuerSerial }
  // IssuerSerial ::= SEQUENCE { issuer GeneralNames (one directoryName [4]), serialNumber }
  const essCertIdV2 = der(
    TAG.sequence,
    der(TAG.octetString, hash('sha256', signerDer)),
    der(TAG.sequence, der(TAG.sequence, der(TAG.context4, issuer)), serial),
  );
  return { issuer, serial, essCertIdV2 };
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
