/**
 * The signature time-stamp of a CMS signature (PAdES B-T), checked: the token (an RFC 3161 TimeStampToken in the
 * unsigned attribute id-aa-signatureTimeStampToken) verifies, is signed by a time-stamping certificate, and
 * stamps the SHA-256 of this very signature value; with trust anchors, the TSA's chain is checked at the time it
 * stamped. Its genTime is then the proven time of the signature.
 */
import { X509Certificate } from 'node:crypto';
import { hash, OID } from '../cms-algorithms';
import { parseSignedData } from '../cms-parse';
import { verifyEncapsulatedCms } from '../cms-verify';
import { DerError } from '../der';
import { decodeTstInfo } from '../tsa/timestamp-protocol';

export interface TimestampReport {
  /** genTime: when the TSA saw the signature value (ISO 8601); null when the token cannot be read. */
  time: string | null;
  /** Subject of the TSA's certificate (RFC 4514). */
  tsa: string | null;
  policy: string | null;
  /** The token verifies, is signed by a time-stamping certificate and stamps this signature's value. */
  valid: boolean;
  /** The TSA's chain to a trust anchor at `time`; null without trust anchors. */
  chain_valid: boolean | null;
  problems: string[];
}

/** The signature time-stamp of `cms`, checked; null when the signature carries none (or is not a readable CMS). */
export async function verifySignatureTimestamp(cms: Uint8Array, trustedRootsPem?: string[]): Promise<TimestampReport | null> {
  let token: Buffer | undefined;
  let signatureValue: Buffer;
  try {
    const { signerInfo } = parseSignedData(cms);
    token = signerInfo.unsignedAttributes.get(OID.signatureTimeStampToken)?.[0];
    signatureValue = signerInfo.signature;
  } catch (error) {
    if (error instanceof DerError) return null;
    throw error;
  }
  if (!token) return null;
  const { report } = await checkToken(token, hash('sha256', signatureValue), trustedRootsPem, {
    label: 'time-stamp token',
    otherDigest: 'the time-stamp token does not stamp this signature value',
  });
  return report;
}

/**
 * A document time-stamp (PAdES B-LTA: a /DocTimeStamp whose /Contents is a time-stamp token over the ByteRange),
 * checked like a signature time-stamp, against the digest of the bytes it covers.
 */
export async function verifyDocumentTimestamp(
  token: Uint8Array,
  coveredDigest: Buffer,
  trustedRootsPem?: string[],
): Promise<TimestampReport & { signatureValid: boolean; digestValid: boolean; signingCertificateV2Valid: boolean }> {
  const { report, signatureValid, stampsDigest, signingCertificateV2Valid } = await checkToken(
    token,
    coveredDigest,
    trustedRootsPem,
    {
      label: 'document time-stamp',
      otherDigest: 'the document time-stamp does not stamp the bytes its ByteRange covers',
    },
  );
  return { ...report, signatureValid, digestValid: stampsDigest, signingCertificateV2Valid };
}

/**
 * One check of a time-stamp token over `digest`: its TSTInfo is read first (for the time it claims), then the token
 * is verified once, its TSA's chain judged at that time.
 */
async function checkToken(
  token: Uint8Array,
  digest: Buffer,
  trustedRootsPem: string[] | undefined,
  words: { label: string; otherDigest: string },
): Promise<{ report: TimestampReport; signatureValid: boolean; stampsDigest: boolean; signingCertificateV2Valid: boolean }> {
  const report: TimestampReport = { time: null, tsa: null, policy: null, valid: false, chain_valid: null, problems: [] };
  let info;
  let unreadable = '';
  try {
    const { eContent } = parseSignedData(token);
    info = eContent ? decodeTstInfo(eContent) : undefined;
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    unreadable = error.message;
  }
  const verified = await verifyEncapsulatedCms(token, OID.tstInfo, { trustedRootsPem, at: info?.genTime });
  report.tsa = verified.signerSubject || null;
  report.problems = verified.problems.map((problem) => `${words.label}: ${problem}`);
  const outcome = {
    report,
    signatureValid: verified.signatureValid,
    stampsDigest: false,
    signingCertificateV2Valid: verified.signingCertificateV2Valid,
  };
  if (!verified.content) return outcome;
  if (!info) {
    report.problems.push(`${words.label}: no valid TSTInfo (${unreadable})`);
    return outcome;
  }
  report.time = info.genTime.toISOString();
  report.policy = info.policyOid;
  report.chain_valid = verified.chainValid;
  outcome.stampsDigest = info.hashOid === OID.sha256 && info.digest.equals(digest);
  if (!outcome.stampsDigest) report.problems.push(words.otherDigest);
  const tsaCertificate = verified.signerCertificatePem ? new X509Certificate(verified.signerCertificatePem) : undefined;
  const timeStamping = !!tsaCertificate?.keyUsage?.includes(OID.timeStamping);
  if (tsaCertificate && !timeStamping) report.problems.push(`the ${words.label} is not signed by a time-stamping certificate`);
  report.valid =
    verified.signatureValid && verified.digestValid && verified.signingCertificateV2Valid && outcome.stampsDigest && timeStamping;
  return outcome;
}
