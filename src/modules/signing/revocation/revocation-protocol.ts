/**
 * Revocation data as its standards write it, with the DER codec of ../der.ts: a CRL (RFC 5280 5.1) and the OCSP
 * request and response (RFC 6960 4.1 and 4.2, with the nonce of RFC 8954). What the sandbox CA publishes, and what
 * PAdES B-LT embeds in a document's /DSS.
 *
 *   CertificateList ::= SEQUENCE { tbsCertList, signatureAlgorithm, signatureValue BIT STRING }
 *   TBSCertList     ::= SEQUENCE { version v2, signature, issuer Name, thisUpdate, nextUpdate,
 *                                  revokedCertificates OPTIONAL, crlExtensions [0] }
 *   OCSPRequest     ::= SEQUENCE { tbsRequest SEQUENCE { version [0] OPTIONAL, requestorName [1] OPTIONAL,
 *                                  requestList SEQUENCE OF Request { reqCert CertID, ... }, requestExtensions [2] } }
 *   CertID          ::= SEQUENCE { hashAlgorithm, issuerNameHash, issuerKeyHash, serialNumber }
 *   OCSPResponse    ::= SEQUENCE { responseStatus ENUMERATED, responseBytes [0] { id-pkix-ocsp-basic, OCTET STRING } }
 *   BasicOCSPResponse ::= SEQUENCE { tbsResponseData, signatureAlgorithm, signature BIT STRING, certs [0] }
 */
import { constants, createHash, createPrivateKey, createSign, X509Certificate } from 'node:crypto';
import { OID } from '../cms-algorithms';
import {
  children,
  contentOf,
  der,
  DerError,
  expectTag,
  generalizedTime,
  integer,
  oid,
  raw,
  readOid,
  readRoot,
  TAG,
  unsignedInteger,
  type Tlv,
} from '../der';

export const OCSP_REQUEST_TYPE = 'application/ocsp-request';
export const OCSP_RESPONSE_TYPE = 'application/ocsp-response';

export const OCSP_OID = {
  basic: '1.3.6.1.5.5.7.48.1.1',
  nonce: '1.3.6.1.5.5.7.48.1.2',
  sha1: '1.3.14.3.2.26',
  authorityKeyIdentifier: '2.5.29.35',
  crlNumber: '2.5.29.20',
} as const;

/** RFC 6960 4.2.1 OCSPResponseStatus. */
export const OCSP_STATUS = { successful: 0, malformedRequest: 1, internalError: 2, tryLater: 3, unauthorized: 6 } as const;

export interface Issuer {
  privateKeyPem: string;
  certificatePem: string;
}

/** A CA's Name (whole TLV) and its public key's bits (the subjectPublicKey BIT STRING's content, unused-bits byte dropped). */
export function issuerParts(certificatePem: string): { name: Buffer; keyBits: Buffer; der: Buffer } {
  const certificate = new X509Certificate(certificatePem).raw;
  const root = expectTag(readRoot(certificate), TAG.sequence, 'Certificate');
  const tbs = children(certificate, expectTag(children(certificate, root)[0], TAG.sequence, 'tbsCertificate'));
  if (tbs[0]?.tag === TAG.context0) tbs.shift();
  const name = raw(certificate, expectTag(tbs[4], TAG.sequence, 'subject'));
  const spki = children(certificate, expectTag(tbs[5], TAG.sequence, 'subjectPublicKeyInfo'));
  const bits = contentOf(certificate, expectTag(spki[1], TAG.bitString, 'subjectPublicKey'));
  return { name, keyBits: bits.subarray(1), der: certificate };
}

/** An empty CRL (this sandbox revokes nothing), signed by the issuer: valid from `now` for `hours`. */
export function encodeCrl(
  issuer: Issuer,
  options: { now: Date; hours: number; number: number; revoked?: { serialHex: string; at: Date }[] },
): Buffer {
  const parts = issuerParts(issuer.certificatePem);
  const keyId = createHash('sha1').update(parts.keyBits).digest();
  const extensions = der(
    TAG.context0,
    der(
      TAG.sequence,
      der(TAG.sequence, oid(OCSP_OID.authorityKeyIdentifier), der(TAG.octetString, der(TAG.sequence, der(0x80, keyId)))),
      der(TAG.sequence, oid(OCSP_OID.crlNumber), der(TAG.octetString, integerOf(options.number))),
    ),
  );
  const tbs = der(
    TAG.sequence,
    integer(1), // v2
    sha256WithRsa(),
    parts.name,
    utcTime(options.now),
    utcTime(new Date(options.now.getTime() + options.hours * 3_600_000)),
    // revokedCertificates SEQUENCE OF SEQUENCE { userCertificate, revocationDate }, absent when empty (RFC 5280 5.1.2.6)
    ...(options.revoked?.length
      ? [
          der(
            TAG.sequence,
            ...options.revoked.map((entry) =>
              der(TAG.sequence, unsignedInteger(Buffer.from(entry.serialHex, 'hex')), utcTime(entry.at)),
            ),
          ),
        ]
      : []),
    extensions,
  );
  return signed(tbs, issuer);
}

export interface CertId {
  hashOid: string;
  issuerNameHash: Buffer;
  issuerKeyHash: Buffer;
  /** The serialNumber INTEGER, whole TLV. */
  serial: Buffer;
  /** The CertID as the request wrote it (whole TLV), repeated in the response. */
  raw: Buffer;
}

export function decodeOcspRequest(bytes: Buffer): { certIds: CertId[]; nonce: Buffer | null } {
  const root = expectTag(readRoot(bytes), TAG.sequence, 'OCSPRequest');
  if (root.end !== bytes.length) throw new DerError('unexpected bytes after OCSPRequest');
  const tbs = children(bytes, expectTag(children(bytes, root, 2)[0], TAG.sequence, 'tbsRequest'), 4);
  const requestList = tbs.find((part) => part.tag === TAG.sequence);
  if (!requestList) throw new DerError('no requestList');
  const certIds = children(bytes, requestList, 16).map((request) =>
    readCertId(bytes, children(bytes, expectTag(request, TAG.sequence, 'Request'))[0]),
  );
  if (certIds.length === 0) throw new DerError('an empty requestList');
  let nonce: Buffer | null = null;
  const extensions = tbs.find((part) => part.tag === TAG.context2);
  for (const extension of extensions ? children(bytes, children(bytes, extensions)[0]!, 16) : []) {
    const [type, ...rest] = children(bytes, extension);
    if (readOid(bytes, type) === OCSP_OID.nonce) nonce = contentOf(bytes, rest.at(-1)!);
  }
  return { certIds, nonce };
}

function readCertId(bytes: Buffer, tlv: Tlv | undefined): CertId {
  const [algorithm, nameHash, keyHash, serial] = children(bytes, expectTag(tlv, TAG.sequence, 'CertID'), 4);
  return {
    hashOid: readOid(bytes, children(bytes, expectTag(algorithm, TAG.sequence, 'hashAlgorithm'))[0]),
    issuerNameHash: contentOf(bytes, expectTag(nameHash, TAG.octetString, 'issuerNameHash')),
    issuerKeyHash: contentOf(bytes, expectTag(keyHash, TAG.octetString, 'issuerKeyHash')),
    serial: raw(bytes, expectTag(serial, TAG.integer, 'serialNumber')),
    raw: raw(bytes, tlv!),
  };
}

/** Whether a CertID names a certificate `issuer` issued (by the hashes of its name and key). */
export function issuedBy(certId: CertId, issuer: Issuer): boolean {
  const algorithm = certId.hashOid === OCSP_OID.sha1 ? 'sha1' : certId.hashOid === OID.sha256 ? 'sha256' : null;
  if (!algorithm) return false;
  const parts = issuerParts(issuer.certificatePem);
  return (
    createHash(algorithm).update(parts.name).digest().equals(certId.issuerNameHash) &&
    createHash(algorithm).update(parts.keyBits).digest().equals(certId.issuerKeyHash)
  );
}

/**
 * A successful OCSP response signed by the issuer itself (RFC 6960 4.2.2.2: the CA that issued the certificates),
 * responder named by key hash: `good` for each CertID the issuer issued (`revoked` when `revokedAt` names a time
 * for it), `unknown` for any other; valid from `now`
 * for `hours`; the request's nonce repeated.
 */
export function encodeOcspResponse(
  issuer: Issuer,
  certIds: CertId[],
  options: { now: Date; hours: number; nonce: Buffer | null; revokedAt?: (certId: CertId) => Date | null },
): Buffer {
  const parts = issuerParts(issuer.certificatePem);
  const status = (certId: CertId) => {
    if (!issuedBy(certId, issuer)) return der(0x82); // unknown [2] IMPLICIT NULL
    const revokedAt = options.revokedAt?.(certId);
    // revoked [1] IMPLICIT RevokedInfo { revocationTime } (no reason given); good [0] IMPLICIT NULL
    return revokedAt ? der(0xa1, generalizedTime(revokedAt)) : der(0x80);
  };
  const responses = certIds.map((certId) =>
    der(
      TAG.sequence,
      certId.raw,
      status(certId),
      generalizedTime(options.now),
      der(TAG.context0, generalizedTime(new Date(options.now.getTime() + options.hours * 3_600_000))),
    ),
  );
  const nonceExtension = options.nonce
    ? [der(TAG.context1, der(TAG.sequence, der(TAG.sequence, oid(OCSP_OID.nonce), der(TAG.octetString, options.nonce))))]
    : [];
  const tbs = der(
    TAG.sequence,
    der(TAG.context2, der(TAG.octetString, createHash('sha1').update(parts.keyBits).digest())), // responderID byKey
    generalizedTime(options.now),
    der(TAG.sequence, ...responses),
    ...nonceExtension,
  );
  const basic = der(
    TAG.sequence,
    tbs,
    sha256WithRsa(),
    der(TAG.bitString, Buffer.from([0]), signature(tbs, issuer)),
    der(TAG.context0, der(TAG.sequence, parts.der)),
  );
  return der(
    TAG.sequence,
    der(0x0a, Buffer.from([OCSP_STATUS.successful])),
    der(TAG.context0, der(TAG.sequence, oid(OCSP_OID.basic), der(TAG.octetString, basic))),
  );
}

/** An OCSP response without responseBytes: the request could not be answered (`malformedRequest`, `unauthorized`...). */
export function encodeOcspFailure(status: number): Buffer {
  return der(TAG.sequence, der(0x0a, Buffer.from([status])));
}

// ---------------------------------------------------------------------------------------------------------------

function sha256WithRsa(): Buffer {
  return der(TAG.sequence, oid(OID.sha256WithRSAEncryption), der(TAG.null));
}

function signature(tbs: Buffer, issuer: Issuer): Buffer {
  return createSign('sha256')
    .update(tbs)
    .sign({ key: createPrivateKey(issuer.privateKeyPem), padding: constants.RSA_PKCS1_PADDING });
}

function signed(tbs: Buffer, issuer: Issuer): Buffer {
  return der(TAG.sequence, tbs, sha256WithRsa(), der(TAG.bitString, Buffer.from([0]), signature(tbs, issuer)));
}

/** UTCTime, as RFC 5280 wants for dates before 2050. */
function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z';
  return der(TAG.utcTime, Buffer.from(text, 'latin1'));
}

function integerOf(value: number): Buffer {
  const bytes: number[] = [];
  for (let rest = value; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  if (bytes.length === 0 || bytes[0]! & 0x80) bytes.unshift(0);
  return der(TAG.integer, Buffer.from(bytes));
}
