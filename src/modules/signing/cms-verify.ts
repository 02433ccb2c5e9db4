/**
 * In-process verification of a detached CMS SignedData (RFC 5652) as a PAdES signature carries it (cms-sign.ts
 * writes one): the messageDigest against the content, the RSA signature over the signed attributes as
 * transmitted, the signing-certificate-v2 attribute, and, given trust anchors, the chain of the signer at the
 * signing time.
 *
 * The CMS verified comes from PDFs anyone can upload: it is read by cms-parse.ts, which refuses with `DerError`
 * only; that is reported as a "malformed CMS" problem, and `verifyDetachedCms` never throws for any bytes.
 */
import { constants, createVerify, X509Certificate, type KeyObject } from 'node:crypto';
import { DIGEST_BY_OID, hash, OID, RSA_SIGNATURE_DIGEST_BY_OID } from './cms-algorithms';
import { asBuffer, issuerAndSerial, parseSignedData, type ParsedSignedData } from './cms-parse';
import { children, contentOf, DerError, expectTag, raw, readOid, readRoot, readTime, TAG } from './der';
import { formatDistinguishedName } from './distinguished-name';

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
  const result = nothingVerified(roots);
  try {
    verifyInto(result, parseSignedData(cms), asBuffer(content), roots, options.at, OID.data);
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    result.problems.push(`malformed CMS: ${error.message}`);
  }
  return result;
}

/**
 * Verifies a CMS SignedData that carries its content of type `contentType` (a time-stamp token carries its
 * TSTInfo): the same checks as `verifyDetachedCms`, over the encapsulated content, which it returns (null when the
 * CMS is malformed or carries none). Never throws for a bad or malformed CMS.
 */
export async function verifyEncapsulatedCms(
  cms: Uint8Array,
  contentType: string,
  options: CmsVerifyOptions = {},
): Promise<CmsVerification & { content: Buffer | null }> {
  const roots = options.trustedRootsPem?.map((pem) => new X509Certificate(pem));
  const result: CmsVerification & { content: Buffer | null } = { ...nothingVerified(roots), content: null };
  try {
    const parsed = parseSignedData(cms);
    if (!parsed.eContent) result.problems.push('the CMS carries no content');
    else {
      result.content = parsed.eContent;
      verifyInto(result, parsed, parsed.eContent, roots, options.at, contentType);
    }
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    result.problems.push(`malformed CMS: ${error.message}`);
  }
  return result;
}

/** Where every verification starts: nothing holds until shown (the chain is unchecked without roots). */
function nothingVerified(roots: X509Certificate[] | undefined): CmsVerification {
  return {
    signatureValid: false,
    digestValid: false,
    signerSubject: '',
    signerCertificatePem: '',
    certificatesPem: [],
    chainValid: roots ? false : null,
    signingCertificateV2Valid: false,
    problems: [],
  };
}

function verifyInto(
  result: CmsVerification,
  parsed: ParsedSignedData,
  content: Buffer,
  roots: X509Certificate[] | undefined,
  at: Date | undefined,
  expectedContentType: string,
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
  else if (!contentType || oidFromTlv(contentType) !== parsed.eContentType || parsed.eContentType !== expectedContentType)
    problems.push(
      expectedContentType === OID.data
        ? 'the content-type attribute is missing or is not id-data'
        : `the content-type attribute is missing or is not ${expectedContentType}`,
    );
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
  result.signerSubject = formatDistinguishedName(signer.subject);
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

// ---------------------------------------------------------------------------------------------------------------
// Chain building

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
        `certificate "${formatDistinguishedName(current.subject)}" was not valid at ${when} (${current.validFrom} to ${current.validTo})`,
      );
      return false;
    }
    if (roots.some((root) => root.raw.equals(current.raw))) return true;
    const root = roots.find((candidate) => issuedBy(current, candidate));
    if (root) {
      if (validAt(root, at)) return true;
      problems.push(
        `trusted root "${formatDistinguishedName(root.subject)}" was not valid at ${when} (${root.validFrom} to ${root.validTo})`,
      );
      return false;
    }
    seen.add(current.fingerprint256);
    const issuer = carried.find((candidate) => !seen.has(candidate.fingerprint256) && issuedBy(current, candidate));
    if (!issuer) {
      problems.push(
        `the chain of "${formatDistinguishedName(signer.subject)}" does not reach a trusted root (it ends at "${formatDistinguishedName(current.subject)}")`,
      );
      return false;
    }
    if (!issuer.ca) {
      problems.push(`certificate "${formatDistinguishedName(issuer.subject)}" issued a certificate but is not a CA`);
      return false;
    }
    current = issuer;
  }
}

/** `issuer` issued `certificate` and signed it (false when its public key does not decode). */
export function issuedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
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

// ---------------------------------------------------------------------------------------------------------------
// Identifying the signer, reading an attribute

function matchesIssuerSerial(certificate: X509Certificate, issuer: Buffer, serial: Buffer): boolean {
  const own = issuerAndSerial(certificate.raw);
  return own.issuer.equals(issuer) && own.serial.equals(serial);
}

function oidFromTlv(encoded: Buffer): string {
  return readOid(encoded, readRoot(encoded));
}
