/**
 * PAdES B-T: a signature time-stamp (ETSI EN 319 122-1 5.3, RFC 3161 appendix A) added to a CMS signature. The
 * token stamps the SHA-256 of the SignerInfo's signature value and travels as the unsigned attribute
 * id-aa-signatureTimeStampToken: the signed attributes, hence the signature, are untouched, so a signature made by
 * anyone (an ESP's, a PFX holder's) can be stamped afterwards.
 */
import { hash, OID } from '../cms-algorithms';
import { asBuffer } from '../cms-parse';
import { children, contentOf, der, derSetOf, DerError, expectTag, oid, raw, readOid, readRoot, TAG } from '../der';

/** Something that answers a SHA-256 digest with a time-stamp token over it (a TSA client). */
export type Stamper = (digest: Buffer) => Promise<Buffer>;

/** The CMS with a signature time-stamp token added to its (one) SignerInfo; trailing padding is dropped. */
export async function addSignatureTimestamp(cms: Uint8Array, stamp: Stamper): Promise<Buffer> {
  const bytes = asBuffer(cms);
  const contentInfo = expectTag(readRoot(bytes), TAG.sequence, 'ContentInfo');
  const [contentType, explicit] = children(bytes, contentInfo);
  if (readOid(bytes, contentType) !== OID.signedData) throw new DerError('ContentInfo is not id-signedData');
  const signedData = expectTag(children(bytes, expectTag(explicit, TAG.context0, 'content'))[0], TAG.sequence, 'SignedData');
  const parts = children(bytes, signedData);
  const signerInfos = expectTag(parts[parts.length - 1], TAG.set, 'signerInfos');
  const infos = children(bytes, signerInfos, 2);
  if (infos.length !== 1) throw new DerError(`expected exactly one SignerInfo, found ${infos.length}`);
  const fields = children(bytes, expectTag(infos[0], TAG.sequence, 'SignerInfo'));
  const unsigned = fields[fields.length - 1]?.tag === TAG.context1 ? fields.pop()! : undefined;
  const signature = expectTag(fields[fields.length - 1], TAG.octetString, 'signature');

  const token = await stamp(hash('sha256', contentOf(bytes, signature)));
  const attributes = unsigned ? children(bytes, unsigned).map((attribute) => raw(bytes, attribute)) : [];
  attributes.push(der(TAG.sequence, oid(OID.signatureTimeStampToken), der(TAG.set, token)));
  const signerInfo = der(TAG.sequence, ...fields.map((field) => raw(bytes, field)), derSetOf(TAG.context1, attributes));
  const rebuilt = der(TAG.sequence, ...parts.slice(0, -1).map((part) => raw(bytes, part)), der(TAG.set, signerInfo));
  return der(TAG.sequence, raw(bytes, contentType), der(TAG.context0, rebuilt));
}
