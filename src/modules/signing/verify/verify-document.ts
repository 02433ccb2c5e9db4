/**
 * In-process verification of every signature of a PDF: what poppler's `pdfsig` answers, plus what changed in
 * the document after each signature.
 *
 * Signatures are found the robust way, through the document structure (pdf-lib parses the file and keeps the
 * last revision of each object): every AcroForm field of type /Sig with a value (signature-fields.ts). For each, the /ByteRange is
 * checked (it starts at 0, its gap is exactly the /Contents hex string of that dictionary, it stays inside the
 * file), the CMS is verified over the two ranges (digest, signature, signing-certificate-v2, and the chain
 * when trust anchors are given) at the signing time /M, and the incremental updates appended after the signed
 * revision are listed in plain words.
 */
import { PDFArray, PDFDict, PDFHexString, PDFNumber, PDFString, type PDFObject } from 'pdf-lib';
import { issuedBy, verifyDetachedCms } from '../cms-verify';
import { X509Certificate, createHash } from 'node:crypto';
import { decodePDFRawStream, PDFRawStream } from 'pdf-lib';
import { embeddedRevocation, type RevocationStatus } from '../revocation/revocation-client';
import { verifyDocumentTimestamp, verifySignatureTimestamp, type TimestampReport } from './verify-timestamp';
import { parseWithHistory } from './pdf-history';
import { RevisionReader, type RevisionReport } from './verify-revisions';
import { nameOf, parsePdfDate, signatureFields, text, valueOf, type FoundSignature } from './signature-fields';

export type { RevisionReport } from './verify-revisions';

export interface SignatureReport {
  /** The field's full name (`/T`, parents joined with dots); '' for a field without one. */
  field_name: string;
  /** `/Name` of the signature dictionary. */
  signer_name: string | null;
  /** Subject of the signer certificate, RFC 4514 order; null when the CMS carries no signer certificate. */
  signer_subject: string | null;
  /** `/M` of the signature dictionary, as an ISO 8601 instant; null when absent or unreadable. */
  signing_time: string | null;
  reason: string | null;
  /** `/SubFilter`, e.g. `ETSI.CAdES.detached`. */
  sub_filter: string | null;
  byte_range: number[];
  /** Four whole numbers starting at 0, the gap is exactly this dictionary's /Contents hex string, inside the file. */
  byte_range_valid: boolean;
  /** The CMS messageDigest equals the digest of the bytes the ByteRange covers. */
  digest_valid: boolean;
  /** The CMS signature verifies with the signer certificate. */
  signature_valid: boolean;
  signing_certificate_v2_valid: boolean;
  /**
   * The signer's chain to a trust anchor, at the time the signature time-stamp proves (when it is valid), else at
   * `/M`; null when no trust anchors were given (nothing to chain to).
   */
  certificate_chain_valid: boolean | null;
  /** The signature time-stamp (PAdES B-T), checked; null when the signature has none. */
  timestamp: TimestampReport | null;
  /**
   * What the document's /DSS says of the signer certificate's revocation (an embedded OCSP response or CRL its issuer
   * signed); null when the document has no /DSS or this is a document time-stamp.
   */
  revocation: { status: RevocationStatus; source: 'ocsp' | 'crl' | null } | null;
  /**
   * The PAdES baseline level the signature reaches: `B-B` (an ETSI.CAdES.detached signature that verifies, with
   * its signing certificate bound), `B-T` (and a valid signature time-stamp), `B-LT` (and the /DSS holds good
   * revocation data for its signer), `B-LTA` (and a valid document time-stamp covers that); null when it reaches
   * none, and for a document time-stamp itself.
   */
  pades_level: 'B-B' | 'B-T' | 'B-LT' | 'B-LTA' | null;
  /** The signed ranges reach the end of the file: nothing was appended after this signature. */
  covers_whole_document: boolean;
  /** Where the revision this signature signs ends (ByteRange[2] + ByteRange[3]). */
  revision_bytes: number;
  /** The incremental updates appended after the signed revision, in plain words, oldest first. */
  changes_after: string[];
  /** Why any of the checks above failed; empty when all hold. */
  problems: string[];
}

export interface DocumentVerification {
  /** In file order (by where each signature's /Contents is). */
  signatures: SignatureReport[];
  /**
   * The revisions from the one the first signature covers on, each judged: did it only add what signing may add,
   * or change the content the earlier signatures covered?
   */
  revisions: RevisionReport[];
  /**
   * There is at least one signature, every one has a well-formed ByteRange, a valid digest and signature (and a
   * valid chain when trust anchors were given), and no revision after the first signature changed content: what was
   * appended after a signature is only what signing may add (as Acrobat's "changes allowed").
   */
  all_valid: boolean;
  document_bytes: number;
}

export interface VerifyPdfOptions {
  /** Trust anchors for `certificate_chain_valid`; without them it is null. */
  trustedRootsPem?: string[];
}

/** The OCSP responses and CRLs of the document's /DSS. */
interface ValidationData {
  ocsps: Buffer[];
  crls: Buffer[];
}

export async function verifyPdfSignatures(pdf: Uint8Array, options: VerifyPdfOptions = {}): Promise<DocumentVerification> {
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  // One parse keeps every version of every object: the signatures are read from the last, the revisions judged
  // against the earlier ones.
  const history = await parseWithHistory(bytes);
  const { context } = history;
  const catalog = context.lookup(context.trailerInfo.Root);
  if (!(catalog instanceof PDFDict)) throw new Error('the document has no catalog');
  const found = signatureFields(context, catalog);
  const fieldBySignature = new Map(found.flatMap((sig) => (sig.ref ? [[sig.ref, sig.fieldName] as const] : [])));
  const updates = new RevisionReader(history, fieldBySignature);

  const dss = validationData(catalog);
  const signatures: SignatureReport[] = [];
  for (const signature of found) signatures.push(await verifySignature(bytes, signature, updates, options, dss));
  signatures.sort((a, b) => (a.byte_range[1] ?? 0) - (b.byte_range[1] ?? 0));
  // B-LTA: a valid document time-stamp appended after the signature's revision covers it and the /DSS.
  for (const signature of signatures) {
    const covered = signatures.some(
      (stamp) => stamp.sub_filter === 'ETSI.RFC3161' && stamp.timestamp?.valid && stamp.byte_range[1]! > signature.revision_bytes,
    );
    if (signature.pades_level === 'B-LT' && covered) signature.pades_level = 'B-LTA';
  }

  const revisions = updates.revisions(
    signatures.filter((s) => s.byte_range_valid).map((s) => ({ field: s.field_name, revisionEnd: s.revision_bytes })),
  );
  const all_valid =
    signatures.length > 0 &&
    signatures.every((s) => s.byte_range_valid && s.digest_valid && s.signature_valid && s.certificate_chain_valid !== false) &&
    revisions.every((revision) => revision.verdict !== 'content_changed');
  return { signatures, revisions, all_valid, document_bytes: bytes.length };
}

/** The OCSP responses and CRLs of the catalog's /DSS (PAdES B-LT); null when the document has none. */
function validationData(catalog: PDFDict): ValidationData | null {
  const dss = valueOf(catalog, 'DSS');
  if (!(dss instanceof PDFDict)) return null;
  const streams = (key: string) => {
    const list = valueOf(dss, key);
    if (!(list instanceof PDFArray)) return [];
    return list.asArray().flatMap((item) => {
      const stream = dss.context.lookup(item);
      try {
        return stream instanceof PDFRawStream ? [Buffer.from(decodePDFRawStream(stream).decode())] : [];
      } catch {
        return [];
      }
    });
  };
  return { ocsps: streams('OCSPs'), crls: streams('CRLs') };
}

/** The certificate, among these, that issued `certificatePem` (and whose key verifies it). */
function issuerAmong(certificatePem: string, candidates: string[]): string | undefined {
  const certificate = new X509Certificate(certificatePem);
  return candidates.find((pem) => {
    const candidate = new X509Certificate(pem);
    return candidate.fingerprint256 !== certificate.fingerprint256 && issuedBy(certificate, candidate);
  });
}

async function verifySignature(
  pdf: Buffer,
  found: FoundSignature,
  updates: RevisionReader,
  options: VerifyPdfOptions,
  dss: ValidationData | null,
): Promise<SignatureReport> {
  const { dict } = found;
  const problems: string[] = [];
  const time = text(dict, 'M');
  const signingTime = time === null ? null : parsePdfDate(time);
  if (time !== null && !signingTime) problems.push(`the signing time /M ${JSON.stringify(time)} is not a PDF date`);

  const contents = valueOf(dict, 'Contents');
  const { byteRange, inside, byteRangeValid } = checkByteRange(pdf, dict, contents, problems);
  const report: SignatureReport = {
    field_name: found.fieldName,
    signer_name: text(dict, 'Name'),
    signer_subject: null,
    signing_time: signingTime?.toISOString() ?? null,
    reason: text(dict, 'Reason'),
    sub_filter: nameOf(dict, 'SubFilter'),
    byte_range: byteRange,
    byte_range_valid: byteRangeValid,
    digest_valid: false,
    signature_valid: false,
    signing_certificate_v2_valid: false,
    certificate_chain_valid: options.trustedRootsPem ? false : null,
    timestamp: null,
    revocation: null,
    pades_level: null,
    covers_whole_document: inside && byteRange[2] + byteRange[3] === pdf.length,
    revision_bytes: inside ? byteRange[2] + byteRange[3] : 0,
    changes_after: inside ? updates.changesAfter(byteRange[2] + byteRange[3]) : [],
    problems,
  };
  if (!(contents instanceof PDFHexString || contents instanceof PDFString)) {
    problems.push('the signature dictionary has no /Contents string');
    return report;
  }
  if (!inside) return report;

  const signed = Buffer.concat([
    pdf.subarray(byteRange[0], byteRange[0] + byteRange[1]),
    pdf.subarray(byteRange[2], byteRange[2] + byteRange[3]),
  ]);
  if (report.sub_filter === 'ETSI.RFC3161') await checkDocumentTimestamp(report, contents, signed, options);
  else await checkCmsSignature(report, contents, signed, signingTime, options, dss);
  return report;
}

/**
 * The /ByteRange as numbers; `inside`: four ordered ranges inside the file; `byteRangeValid`: besides, it starts at 0
 * and its gap is exactly the /Contents hex string.
 */
function checkByteRange(pdf: Buffer, dict: PDFDict, contents: PDFObject | undefined, problems: string[]) {
  const rangeValues = valueOf(dict, 'ByteRange');
  const byteRange =
    rangeValues instanceof PDFArray
      ? rangeValues.asArray().map((item) => {
          const number = dict.context.lookup(item);
          return number instanceof PDFNumber ? number.asNumber() : NaN;
        })
      : [];
  const inside =
    byteRange.length === 4 &&
    byteRange.every((n) => Number.isSafeInteger(n) && n >= 0) &&
    byteRange[0] + byteRange[1] <= byteRange[2] &&
    byteRange[2] + byteRange[3] <= pdf.length;
  const byteRangeValid = inside && byteRange[0] === 0 && gapIsContents(pdf, byteRange, contents);
  if (!inside) problems.push(`the ByteRange ${JSON.stringify(byteRange)} is not four ordered ranges inside the file`);
  else if (!byteRangeValid) problems.push('the ByteRange does not start at 0 or its gap is not exactly the /Contents hex string');
  return { byteRange, inside, byteRangeValid };
}

/** A document time-stamp (ETSI.RFC3161): its token stamps the digest of the signed ranges. */
async function checkDocumentTimestamp(
  report: SignatureReport,
  contents: PDFHexString | PDFString,
  signed: Buffer,
  options: VerifyPdfOptions,
): Promise<void> {
  const stamp = await verifyDocumentTimestamp(
    contents.asBytes(),
    createHash('sha256').update(signed).digest(),
    options.trustedRootsPem,
  );
  const { signatureValid, digestValid, signingCertificateV2Valid, ...timestampReport } = stamp;
  Object.assign(report, {
    signer_subject: stamp.tsa,
    digest_valid: digestValid,
    signature_valid: signatureValid,
    signing_certificate_v2_valid: signingCertificateV2Valid,
    certificate_chain_valid: stamp.chain_valid,
    timestamp: timestampReport,
  });
  report.problems.push(...stamp.problems);
}

/** A CMS signature over the signed ranges, its signature time-stamp, its revocation in the /DSS, its PAdES level. */
async function checkCmsSignature(
  report: SignatureReport,
  contents: PDFHexString | PDFString,
  signed: Buffer,
  signingTime: Date | null,
  options: VerifyPdfOptions,
  dss: ValidationData | null,
): Promise<void> {
  const timestamp = await verifySignatureTimestamp(contents.asBytes(), options.trustedRootsPem);
  // A valid time-stamp proves when the signature existed: the signer's certificate must have been valid then.
  const provenTime = timestamp?.valid && timestamp.time ? new Date(timestamp.time) : undefined;
  const cms = await verifyDetachedCms(contents.asBytes(), signed, {
    trustedRootsPem: options.trustedRootsPem,
    at: provenTime ?? signingTime ?? undefined,
  });
  report.signer_subject = cms.signerSubject || null;
  report.digest_valid = cms.digestValid;
  report.signature_valid = cms.signatureValid;
  report.signing_certificate_v2_valid = cms.signingCertificateV2Valid;
  report.certificate_chain_valid = cms.chainValid;
  report.timestamp = timestamp;
  report.problems.push(...cms.problems, ...(timestamp?.problems ?? []));
  const baseline =
    report.byte_range_valid &&
    cms.digestValid &&
    cms.signatureValid &&
    cms.signingCertificateV2Valid &&
    report.sub_filter === 'ETSI.CAdES.detached';
  if (dss && cms.signerCertificatePem) {
    const issuer = issuerAmong(cms.signerCertificatePem, [...cms.certificatesPem, ...(options.trustedRootsPem ?? [])]);
    report.revocation = issuer
      ? embeddedRevocation(cms.signerCertificatePem, issuer, dss)
      : { status: 'unavailable', source: null };
  }
  report.pades_level = !baseline ? null : !timestamp?.valid ? 'B-B' : report.revocation?.status === 'good' ? 'B-LT' : 'B-T';
}

/** The bytes between the two ranges are `<hex>` and that hex is the /Contents of this very dictionary. */
function gapIsContents(pdf: Buffer, byteRange: number[], contents: PDFObject | undefined): boolean {
  if (!(contents instanceof PDFHexString)) return false;
  const start = byteRange[0] + byteRange[1];
  const end = byteRange[2];
  if (end - start < 2 || pdf[start] !== 0x3c /* < */ || pdf[end - 1] !== 0x3e /* > */) return false;
  const gap = pdf.toString('latin1', start + 1, end - 1);
  return /^[0-9A-Fa-f]*$/.test(gap) && gap.toUpperCase() === contents.asString().replace(/\s+/g, '').toUpperCase();
}
