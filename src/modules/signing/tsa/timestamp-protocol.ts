/**
 * The Time-Stamp Protocol (RFC 3161, with the ESSCertIDv2 of RFC 5816): the request a client sends, the answer a
 * TSA gives, and the TSTInfo inside a time-stamp token. Written and read with the DER codec of ../der.ts, like the
 * rest of the CMS code (the reader's promises hold for the TSA's answer too: it is bytes from the network).
 *
 *   TimeStampReq  ::= SEQUENCE { version 1, messageImprint, reqPolicy OID OPTIONAL, nonce INTEGER OPTIONAL,
 *                                certReq BOOLEAN DEFAULT FALSE, extensions [0] OPTIONAL }
 *   TimeStampResp ::= SEQUENCE { status PKIStatusInfo, timeStampToken ContentInfo OPTIONAL }
 *   TSTInfo       ::= SEQUENCE { version 1, policy OID, messageImprint, serialNumber INTEGER, genTime,
 *                                accuracy OPTIONAL, ordering BOOLEAN DEFAULT FALSE, nonce OPTIONAL,
 *                                tsa [0] OPTIONAL, extensions [1] OPTIONAL }
 *   MessageImprint ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier, hashedMessage OCTET STRING }
 */
import { OID } from '../cms-algorithms';
import {
  boolean,
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
  readTime,
  TAG,
  type Tlv,
  unsignedInteger,
} from '../der';

export const TIMESTAMP_QUERY_TYPE = 'application/timestamp-query';
export const TIMESTAMP_REPLY_TYPE = 'application/timestamp-reply';

/** PKIStatus values (RFC 3161 2.4.2). */
export const PKI_STATUS = { granted: 0, grantedWithMods: 1, rejection: 2 } as const;
/** PKIFailureInfo bits a TSA answers a refusal with. */
export const PKI_FAILURE = { badAlg: 0, badRequest: 2, badDataFormat: 5, unacceptedPolicy: 15, systemFailure: 25 } as const;

export interface TimestampRequest {
  /** SHA-256 of what is stamped (for a signature timestamp: the signature value). */
  digest: Buffer;
  policyOid?: string;
  /** Random, positive; the token must repeat it. */
  nonce: Buffer;
}

export function encodeTimestampRequest(request: TimestampRequest): Buffer {
  return der(
    TAG.sequence,
    integer(1),
    messageImprint(request.digest),
    ...(request.policyOid ? [oid(request.policyOid)] : []),
    unsignedInteger(request.nonce),
    boolean(true), // certReq: the token carries the TSA's certificate, so a verifier needs nothing else
  );
}

export interface ParsedTimestampRequest {
  hashOid: string;
  digest: Buffer;
  policyOid: string | null;
  /** The nonce INTEGER's content bytes, as sent. */
  nonce: Buffer | null;
  certReq: boolean;
  hasExtensions: boolean;
}

/** A TimeStampReq, as a TSA reads it; anything malformed is `DerError`. */
export function decodeTimestampRequest(bytes: Buffer): ParsedTimestampRequest {
  const root = expectTag(readRoot(bytes), TAG.sequence, 'TimeStampReq');
  if (root.end !== bytes.length) throw new DerError('unexpected bytes after TimeStampReq');
  const [version, imprint, ...rest] = children(bytes, root, 8);
  if (!contentOf(bytes, expectTag(version, TAG.integer, 'version')).equals(Buffer.from([1])))
    throw new DerError('TimeStampReq version is not 1');
  const { hashOid, digest } = readMessageImprint(bytes, imprint);
  const request: ParsedTimestampRequest = { hashOid, digest, policyOid: null, nonce: null, certReq: false, hasExtensions: false };
  for (const part of rest) {
    if (part.tag === TAG.oid) request.policyOid = readOid(bytes, part);
    else if (part.tag === TAG.integer) request.nonce = contentOf(bytes, part);
    else if (part.tag === TAG.boolean) request.certReq = contentOf(bytes, part)[0] !== 0;
    else if (part.tag === TAG.context0) request.hasExtensions = true;
    else throw new DerError(`unexpected element (tag ${part.tag}) in TimeStampReq`);
  }
  return request;
}

export interface TstInfo {
  policyOid: string;
  hashOid: string;
  digest: Buffer;
  /** The serialNumber INTEGER's content bytes. */
  serialNumber: Buffer;
  genTime: Date;
  /** The nonce INTEGER's content bytes; null when the token has none. */
  nonce: Buffer | null;
}

export function encodeTstInfo(info: TstInfo & { accuracySeconds?: number }): Buffer {
  return der(
    TAG.sequence,
    integer(1),
    oid(info.policyOid),
    messageImprint(info.digest),
    unsignedInteger(info.serialNumber),
    generalizedTime(info.genTime),
    ...(info.accuracySeconds ? [der(TAG.sequence, integer(info.accuracySeconds))] : []),
    ...(info.nonce ? [der(TAG.integer, info.nonce)] : []),
  );
}

export function decodeTstInfo(bytes: Buffer): TstInfo {
  const root = expectTag(readRoot(bytes), TAG.sequence, 'TSTInfo');
  const [version, policy, imprint, serial, genTime, ...rest] = children(bytes, root, 10);
  if (!contentOf(bytes, expectTag(version, TAG.integer, 'version')).equals(Buffer.from([1])))
    throw new DerError('TSTInfo version is not 1');
  const { hashOid, digest } = readMessageImprint(bytes, imprint);
  const nonce = rest.find((part) => part.tag === TAG.integer);
  return {
    policyOid: readOid(bytes, policy),
    hashOid,
    digest,
    serialNumber: contentOf(bytes, expectTag(serial, TAG.integer, 'serialNumber')),
    genTime: readTime(raw(bytes, expectTag(genTime, TAG.generalizedTime, 'genTime'))),
    nonce: nonce ? contentOf(bytes, nonce) : null,
  };
}

export interface TimestampResponse {
  status: number;
  statusText: string | null;
  /** The TimeStampToken (a ContentInfo holding a SignedData), whole; null when the TSA refused. */
  token: Buffer | null;
}

export function encodeTimestampResponse(status: number, token?: Buffer, failureBit?: number, text?: string): Buffer {
  const statusInfo = der(
    TAG.sequence,
    integer(status),
    ...(text ? [der(TAG.sequence, der(0x0c, Buffer.from(text, 'utf8')))] : []),
    ...(failureBit === undefined ? [] : [failureInfo(failureBit)]),
  );
  return der(TAG.sequence, statusInfo, ...(token ? [token] : []));
}

export function decodeTimestampResponse(bytes: Buffer): TimestampResponse {
  const root = expectTag(readRoot(bytes), TAG.sequence, 'TimeStampResp');
  const [statusInfo, token] = children(bytes, root, 2);
  const [status, ...details] = children(bytes, expectTag(statusInfo, TAG.sequence, 'PKIStatusInfo'), 3);
  const statusBytes = contentOf(bytes, expectTag(status, TAG.integer, 'PKIStatus'));
  if (statusBytes.length !== 1) throw new DerError('PKIStatus out of range');
  const freeText = details.find((part) => part.tag === TAG.sequence);
  const texts = freeText ? children(bytes, freeText, 8).map((text) => contentOf(bytes, text).toString('utf8')) : [];
  return {
    status: statusBytes[0]!,
    statusText: texts.length ? texts.join('; ').slice(0, 500) : null,
    token: token ? raw(bytes, expectTag(token, TAG.sequence, 'TimeStampToken')) : null,
  };
}

// ---------------------------------------------------------------------------------------------------------------

function messageImprint(digest: Buffer): Buffer {
  if (digest.length !== 32) throw new RangeError('a message imprint here is a SHA-256 digest (32 bytes)');
  return der(TAG.sequence, der(TAG.sequence, oid(OID.sha256)), der(TAG.octetString, digest));
}

function readMessageImprint(bytes: Buffer, imprint: Tlv | undefined) {
  const [algorithm, hashed] = children(bytes, expectTag(imprint, TAG.sequence, 'MessageImprint'), 2);
  const hashOid = readOid(bytes, children(bytes, expectTag(algorithm, TAG.sequence, 'hashAlgorithm'), 2)[0]);
  return { hashOid, digest: contentOf(bytes, expectTag(hashed, TAG.octetString, 'hashedMessage')) };
}

/** A PKIFailureInfo BIT STRING with one bit set (DER: no trailing zero bits beyond the named one). */
function failureInfo(bit: number): Buffer {
  const bytes = Buffer.alloc(Math.floor(bit / 8) + 1);
  bytes[Math.floor(bit / 8)] = 0x80 >> (bit % 8);
  return der(TAG.bitString, Buffer.from([7 - (bit % 8)]), bytes);
}
