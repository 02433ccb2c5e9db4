import { constants, verify, X509Certificate } from 'node:crypto';
import { hash, OID } from '../cms-algorithms';
import { assembleSignedData, certificateParts, signedAttributes } from '../cms-sign';

/**
 * A DSC signature is made in two steps, because the key never leaves the signer's token: this service prepares what
 * is signed exactly as an ESP's signature would be (the byte range's SHA-256 as message-digest, in the same signed
 * attributes), the token signs the SHA-256 of those attributes (PKCS#1 v1.5 over its DigestInfo), and this service
 * wraps that signature into the CMS. The attributes are deterministic, so nothing but the certificate and the
 * byte range's digest needs keeping between the steps.
 */

/** Step 1: the digest the token signs (SHA-256 of the DER signed attributes) for this certificate and byte range. */
export function dscDigestToSign(certificateDer: Buffer, rangeDigest: Buffer): Buffer {
  return hash('sha256', dscSignedAttributes(certificateDer, rangeDigest));
}

/**
 * Step 2: the detached CMS SignedData (certificate and chain carried) around the token's signature, or null when
 * the signature does not verify with the certificate's key over those attributes.
 */
export function dscCms(
  certificateDer: Buffer,
  chainDers: readonly Buffer[],
  rangeDigest: Buffer,
  signature: Buffer,
): Buffer | null {
  const signedAttrs = dscSignedAttributes(certificateDer, rangeDigest);
  const key = new X509Certificate(certificateDer).publicKey;
  if (key.asymmetricKeyType !== 'rsa') return null;
  if (!verify('sha256', signedAttrs, { key, padding: constants.RSA_PKCS1_PADDING }, signature)) return null;
  const { issuer, serial } = certificateParts(certificateDer);
  const certificates: Buffer[] = [];
  for (const certificate of [certificateDer, ...chainDers]) {
    if (!certificates.some((known) => known.equals(certificate))) certificates.push(certificate);
  }
  return assembleSignedData({ contentType: OID.data, signedAttrs, signature, issuer, serial, certificates });
}

function dscSignedAttributes(certificateDer: Buffer, rangeDigest: Buffer): Buffer {
  if (rangeDigest.length !== 32) throw new RangeError('a byte range digest is SHA-256 (32 bytes)');
  return signedAttributes(OID.data, rangeDigest, certificateParts(certificateDer).essCertIdV2);
}
