import { X509Certificate } from 'node:crypto';
import { hash } from '../cms-algorithms';
import forge from 'node-forge';
import { NAME_OID, subjectAttributes } from '../certificates';
import { NAME_MATCH_PASS_SCORE, nameMatchScore } from '../name-match';
import {
  fetchIssuerCertificate,
  fetchRevocation,
  type FetchOptions,
  type RevocationEvidence,
} from '../revocation/revocation-client';

/**
 * The checks a DSC (a Digital Signature Certificate on the signer's USB token) passes before its signature is
 * accepted: it chains to a configured trust anchor (CCA's Root Certifying Authority of India in production; the
 * sandbox adds its test CA), every certificate on the way is valid now, it has the non-repudiation key usage, it is
 * not revoked (OCSP, else CRL, asked now and bounded as the LTV step is), its key is RSA, its CN matches the
 * signer's name, and it is the one the owner's rule names, when there is a rule.
 */

export type DscRefusalCode =
  | 'dsc_certificate_invalid'
  | 'dsc_untrusted'
  | 'dsc_expired'
  | 'dsc_no_non_repudiation'
  | 'dsc_revoked'
  | 'dsc_revocation_unavailable'
  | 'dsc_name_mismatch'
  | 'dsc_not_pinned';

export interface DscRefusal {
  code: DscRefusalCode;
  message: string;
  /** The signer presented a certificate that cannot sign here: counted against `max_retry`. Else nobody's fault. */
  signersDoing: boolean;
}

/**
 * The owner's rule on which certificate may sign: the holder's PAN (the subject's serialNumber, 2.5.4.5, holds the
 * SHA-256 of the PAN in hex under the CCA's interoperability guidelines, or the PAN itself on older certificates),
 * the subject's organisation (O), or the certificate's own serial number (hex). Every rule given must hold.
 */
export interface DscCertificateRule {
  pan?: string | null;
  organisation?: string | null;
  serial?: string | null;
}

export interface DscCheckInput {
  certificateDer: Buffer;
  /** Certificates the token holds besides it (intermediates), in any order; anchors need not be among them. */
  chainDers: readonly Buffer[];
  trustAnchorsPem: readonly string[];
  /** The name the CN must match (NAME_MATCH_PASS_SCORE); null: not asked. */
  expectedName: string | null;
  rule: DscCertificateRule | null;
  revocation: FetchOptions;
  now?: Date;
}

export interface DscAccepted {
  certificatePem: string;
  /** Issuers from the certificate's up to the anchor (the anchor included): carried in the CMS for validators. */
  chainPems: string[];
  commonName: string | null;
  nameScore: number | null;
  revocation: RevocationEvidence;
}

const MAX_CHAIN = 6;
const refuse = (code: DscRefusalCode, message: string, signersDoing = true) => ({
  ok: false as const,
  refusal: { code, message, signersDoing },
});

export async function checkDscCertificate(
  input: DscCheckInput,
): Promise<{ ok: true; accepted: DscAccepted } | { ok: false; refusal: DscRefusal }> {
  const now = input.now ?? new Date();
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(input.certificateDer);
  } catch {
    return refuse('dsc_certificate_invalid', 'the certificate is not an X.509 certificate');
  }
  if (certificate.publicKey.asymmetricKeyType !== 'rsa')
    return refuse('dsc_certificate_invalid', 'only RSA certificates are accepted (Class 3 DSCs in India are RSA 2048)');
  const path = await chainOf(certificate, input.chainDers, input.trustAnchorsPem, input.revocation);
  if (!path)
    return refuse(
      'dsc_untrusted',
      `the certificate of ${certificate.subject.replace(/\n/g, ', ')} does not chain to a trusted Certifying Authority`,
    );
  for (const link of [certificate, ...path]) {
    if (new Date(link.validFrom) > now || new Date(link.validTo) <= now)
      return refuse(
        'dsc_expired',
        `${link === certificate ? 'the certificate' : 'an issuing certificate'} is not valid now (valid ${link.validFrom} to ${link.validTo})`,
      );
  }
  if (!hasNonRepudiation(certificate.raw))
    return refuse(
      'dsc_no_non_repudiation',
      'the certificate is not for signatures (no non-repudiation key usage): choose your signing certificate',
    );
  const commonName = dscHolderName(certificate.toString());
  const nameScore = input.expectedName && commonName ? nameMatchScore(commonName, input.expectedName) : null;
  if (input.expectedName && (nameScore === null || nameScore < NAME_MATCH_PASS_SCORE))
    return refuse('dsc_name_mismatch', `the certificate's name (${commonName ?? 'none'}) does not match ${input.expectedName}`);
  const ruleProblem = ruleRefusal(certificate, input.rule);
  if (ruleProblem) return refuse('dsc_not_pinned', ruleProblem);
  const revocation = await fetchRevocation(certificate.toString(), path[0]!.toString(), input.revocation);
  if (revocation.status === 'revoked') return refuse('dsc_revoked', 'the certificate is revoked by its Certifying Authority');
  if (revocation.status !== 'good')
    return refuse(
      'dsc_revocation_unavailable',
      `whether the certificate is revoked could not be learnt now: ${revocation.problems.join('; ') || revocation.status}`,
      false,
    );
  return {
    ok: true,
    accepted: {
      certificatePem: certificate.toString(),
      chainPems: path.map((link) => link.toString()),
      commonName,
      nameScore,
      revocation,
    },
  };
}

/** The holder's name on a certificate: its subject's one CN (null when it has none, or several). */
export function dscHolderName(certificatePem: string): string | null {
  const commonNames = subjectAttributes(certificatePem).filter((attribute) => attribute.type === NAME_OID.commonName);
  return commonNames.length === 1 ? commonNames[0]!.value : null;
}

/**
 * Issuers up to a trust anchor, each checked to have issued (and signed) the one below; null when none is reached.
 * An issuer neither the token nor the anchors hold is fetched where its child says it is published (caIssuers), as
 * Acrobat does: a token often holds the signer's certificate alone.
 */
async function chainOf(
  leaf: X509Certificate,
  carried: readonly Buffer[],
  anchorsPem: readonly string[],
  fetching: FetchOptions,
): Promise<X509Certificate[] | null> {
  const anchors = anchorsPem.map((pem) => new X509Certificate(pem));
  const candidates = [
    ...carried.flatMap((bytes) => {
      try {
        return [new X509Certificate(bytes)];
      } catch {
        return [];
      }
    }),
    ...anchors,
  ];
  const path: X509Certificate[] = [];
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    const issues = (candidate: X509Certificate) =>
      candidate.ca && current.checkIssued(candidate) && current.verify(candidate.publicKey);
    let issuer = candidates.find(issues);
    if (!issuer) {
      const published = await fetchIssuerCertificate(current.toString(), fetching);
      if (!published || !issues(published)) return null;
      issuer = published;
    }
    path.push(issuer);
    if (anchors.some((anchor) => anchor.raw.equals(issuer.raw))) return path;
    current = issuer;
  }
  return null;
}

/**
 * keyUsage nonRepudiation (contentCommitment), as forge reads it (certificates.ts reads extensions the same way);
 * only called once the key is known to be RSA, the only kind forge's certificate reader takes.
 */
function hasNonRepudiation(der: Buffer): boolean {
  const certificate = forge.pki.certificateFromAsn1(forge.asn1.fromDer(der.toString('binary')));
  const usage = certificate.getExtension('keyUsage') as { nonRepudiation?: boolean } | null;
  return usage?.nonRepudiation === true;
}

function ruleRefusal(certificate: X509Certificate, rule: DscCertificateRule | null): string | null {
  if (!rule) return null;
  const subject = subjectAttributes(certificate.toString());
  if (rule.serial && certificate.serialNumber.replace(/^0+/, '').toLowerCase() !== rule.serial.replace(/^0+/, '').toLowerCase())
    return `this signer may sign only with the certificate whose serial number is ${rule.serial}`;
  if (rule.organisation) {
    const wanted = rule.organisation.trim().toLowerCase();
    if (!subject.some((attribute) => attribute.type === NAME_OID.organization && attribute.value.trim().toLowerCase() === wanted))
      return `this signer may sign only with a certificate of ${rule.organisation}`;
  }
  if (rule.pan) {
    const pan = rule.pan.trim().toUpperCase();
    const accepted = new Set([pan, hash('sha256', Buffer.from(pan, 'utf8')).toString('hex')]);
    // A hash is compared in lower case, a PAN in upper case.
    const normalised = (value: string) =>
      /^[0-9a-f]{64}$/i.test(value.trim()) ? value.trim().toLowerCase() : value.trim().toUpperCase();
    if (!subject.some((attribute) => attribute.type === NAME_OID.serialNumber && accepted.has(normalised(attribute.value))))
      return "this signer may sign only with a certificate issued for the PAN the document's owner gave";
  }
  return null;
}
