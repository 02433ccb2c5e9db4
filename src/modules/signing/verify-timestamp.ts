/**
 * The signature time-stamp of a CMS signature (PAdES B-T), checked: the token (an RFC 3161 TimeStampToken in the
 * unsigned attribute id-aa-signatureTimeStampToken) verifies, is signed by a time-stamping certificate, and
 * stamps the SHA-256 of this very signature value; with trust anchors, the TSA's chain is checked at the time it
 * stamped. Its genTime is then the proven time of the signature.
 */
import { X509Certificate } from 'node:crypto';
import { hash, OID } from './cms-algorithms';
import { parseSignedData } from './cms-parse';
import { verifyEncapsulatedCms } from './cms-verify';
import { DerError } from './der';
import { decodeTstInfo } from './tsa/timestamp-protocol';

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

  const report: TimestampReport = { time: null, tsa: null, policy: null, valid: false, chain_valid: null, problems: [] };
  const token_ = await verifyEncapsulatedCms(token, OID.tstInfo);
  report.tsa = token_.signerSubject || null;
  if (!token_.content) {
    report.problems.push(...token_.problems.map((problem) => `time-stamp token: ${problem}`));
    return report;
  }
  let info;
  try {
    info = decodeTstInfo(token_.content);
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    report.problems.push(`time-stamp token: no valid TSTInfo (${error.message})`);
    return report;
  }
  report.time = info.genTime.toISOString();
  report.policy = info.policyOid;
  const problems = token_.problems.map((problem) => `time-stamp token: ${problem}`);
  const stampsThisSignature = info.hashOid === OID.sha256 && info.digest.equals(hash('sha256', signatureValue));
  if (!stampsThisSignature) problems.push('the time-stamp token does not stamp this signature value');
  const tsaCertificate = token_.signerCertificatePem ? new X509Certificate(token_.signerCertificatePem) : undefined;
  const timeStamping = !!tsaCertificate?.keyUsage?.includes(OID.timeStamping);
  if (tsaCertificate && !timeStamping) problems.push('the time-stamp token is not signed by a time-stamping certificate');
  report.valid =
    token_.signatureValid && token_.digestValid && token_.signingCertificateV2Valid && stampsThisSignature && timeStamping;
  if (trustedRootsPem) {
    const chained = await verifyEncapsulatedCms(token, OID.tstInfo, { trustedRootsPem, at: info.genTime });
    report.chain_valid = chained.chainValid;
    if (!chained.chainValid) {
      problems.push(
        ...chained.problems.filter((problem) => !token_.problems.includes(problem)).map((p) => `time-stamp token: ${p}`),
      );
    }
  }
  report.problems = problems;
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
  const verified = await verifyEncapsulatedCms(token, OID.tstInfo);
  const report = {
    time: null as string | null,
    tsa: verified.signerSubject || null,
    policy: null as string | null,
    valid: false,
    chain_valid: null as boolean | null,
    problems: verified.problems.map((problem) => `document time-stamp: ${problem}`),
    signatureValid: verified.signatureValid,
    digestValid: false,
    signingCertificateV2Valid: verified.signingCertificateV2Valid,
  };
  if (!verified.content) return report;
  let info;
  try {
    info = decodeTstInfo(verified.content);
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    report.problems.push(`document time-stamp: no valid TSTInfo (${error.message})`);
    return report;
  }
  report.time = info.genTime.toISOString();
  report.policy = info.policyOid;
  report.digestValid = info.hashOid === OID.sha256 && info.digest.equals(coveredDigest);
  if (!report.digestValid) report.problems.push('the document time-stamp does not stamp the bytes its ByteRange covers');
  const timeStamping = !!(
    verified.signerCertificatePem && new X509Certificate(verified.signerCertificatePem).keyUsage?.includes(OID.timeStamping)
  );
  if (!timeStamping) report.problems.push('the document time-stamp is not signed by a time-stamping certificate');
  report.valid =
    verified.signatureValid && verified.digestValid && verified.signingCertificateV2Valid && report.digestValid && timeStamping;
  if (trustedRootsPem) {
    report.chain_valid = (await verifyEncapsulatedCms(token, OID.tstInfo, { trustedRootsPem, at: info.genTime })).chainValid;
    if (!report.chain_valid) report.problems.push('document time-stamp: the TSA does not chain to a trust anchor');
  }
  return report;
}
