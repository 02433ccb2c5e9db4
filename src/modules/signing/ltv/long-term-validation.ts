/**
 * PAdES B-LT and B-LTA for a finished document (ETSI EN 319 142-1 5.4 and 5.5): every certificate of every
 * signature's and time-stamp's chain, with revocation data for each one below its root (OCSP, else CRL), goes into
 * a /DSS update; then a document time-stamp covers the whole file, the /DSS included. The document then carries
 * what a verifier needs, offline, after every certificate in it has expired.
 *
 * Parsing the document and writing the updates run in the worker pool (its bytes may be anyone's); fetching
 * revocation data and the time-stamp are network calls made here. A certificate whose revocation cannot be
 * learned is reported (`unavailable`), never silently skipped; the document is completed all the same.
 */
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { limitTo } from '../../../platform/limit';
import type { AppServices } from '../../../platform/services';
import { OID } from '../cms-algorithms';
import { parseSignedData } from '../cms-parse';
import { issuedBy } from '../cms-verify';
import { DerError } from '../der';
import type { ValidationData } from '../pdf/dss';
import { fillSignature, signedRangeDigest, type PreparedSignature } from '../pdf/sign-incrementally';
import { fetchRevocation, type RevocationEvidence } from '../revocation/revocation-client';
import { trustAnchorsPem } from '../trust-anchors';
import { stampDigest } from '../tsa/timestamp-signature';

export interface LongTermValidation {
  pdf: Uint8Array;
  /** Each certificate below a root, with what was learned of its revocation. */
  revocation: {
    subject: string;
    status: RevocationEvidence['status'];
    source: RevocationEvidence['source'];
    problems: string[];
  }[];
  /** Whether a document time-stamp was added (B-LTA): not without a TSA. */
  documentTimestamp: boolean;
}

/**
 * Certificates whose revocation is looked up at most, and how many at once. A document can carry hundreds of
 * certificates naming slow servers, so what the lookups may cost is bounded: this many, this many at once, within
 * LTV_REVOCATION_BUDGET_MS in all. The rest are `unavailable`. The signing steps look up what they can before their
 * transaction (prefetchRevocation); what is left for the step inside it is the service's own chains, looked up first.
 */
const MAX_LOOKUPS = 24;
const LOOKUPS_AT_ONCE = 4;

/**
 * What was learned of certificates' revocation before the transaction that needs it, by SHA-256 fingerprint: the
 * lookups of a document's certificates (anyone's, naming any server) are made while no database transaction waits.
 */
export type KnownRevocation = ReadonlyMap<string, RevocationEvidence>;

/**
 * Looks up the revocation of the certificates the documents carry (an envelope's), and of those about to be added to
 * them (a signer's chain, `certificatesPem`, or a signature's CMS, `cms`), outside any transaction, for
 * addLongTermValidation to reuse. Bounded as the step itself is.
 */
export async function prefetchRevocation(
  services: AppServices,
  em: EntityManager,
  input: { pdfs: Uint8Array[]; certificatesPem?: string[]; cms?: Uint8Array[] },
): Promise<KnownRevocation> {
  const contents: Uint8Array[] = [];
  for (const pdf of input.pdfs) contents.push(...(await services.untrusted.run<Uint8Array[]>('signatureContentsTask', { pdf })));
  const carried = [
    ...[...contents, ...(input.cms ?? [])].flatMap(certificatesIn),
    ...(input.certificatesPem ?? []).map((pem) => new X509Certificate(pem)),
  ];
  const { below, evidence } = await lookUpRevocation(services, em, carried, new Map());
  return new Map(below.map((certificate, index) => [certificate.fingerprint256, evidence[index]]));
}

export async function addLongTermValidation(
  services: AppServices,
  em: EntityManager,
  pdf: Uint8Array,
  known: KnownRevocation = new Map(),
): Promise<LongTermValidation> {
  const contents = await services.untrusted.run<Uint8Array[]>('signatureContentsTask', { pdf });
  const { inChains, below, evidence } = await lookUpRevocation(services, em, contents.flatMap(certificatesIn), known);
  const ocsps: Buffer[] = [];
  const crls = new Map<string, Buffer>();
  const revocation: LongTermValidation['revocation'] = below.map((certificate, index) => {
    const found = evidence[index];
    if (found.source === 'ocsp') ocsps.push(found.data!);
    if (found.source === 'crl') crls.set(createHash('sha256').update(found.data!).digest('hex'), found.data!);
    return {
      subject: certificate.subject.replace(/\n/g, ', '),
      status: found.status,
      source: found.source,
      problems: found.problems,
    };
  });

  const data: ValidationData = {
    certificates: [...inChains.values()].map((certificate) => certificate.raw),
    ocsps,
    crls: [...crls.values()],
  };
  let updated = await services.untrusted.run<Uint8Array>('appendValidationDataTask', { pdf, data });

  // B-LTA: a document time-stamp over the whole file, the /DSS included.
  const tsa = services.config.tsa;
  if (tsa) {
    const prepared = await services.untrusted.run<PreparedSignature>('buildDocumentTimestampUpdateTask', {
      pdf: updated,
      fieldName: `DocTimeStamp-${randomBytes(6).toString('hex')}`,
    });
    updated = fillSignature(prepared, await stampDigest(tsa, signedRangeDigest(prepared)));
  }
  return { pdf: updated, revocation, documentTimestamp: !!tsa };
}

/**
 * Every chain, from each carried certificate up to a root through what is known (carried and trust anchors), and the
 * revocation of each certificate below a root: what `known` says, else looked up (bounded: MAX_LOOKUPS).
 */
async function lookUpRevocation(
  services: AppServices,
  em: EntityManager,
  carried: X509Certificate[],
  known: KnownRevocation,
): Promise<{ inChains: Map<string, X509Certificate>; below: X509Certificate[]; evidence: RevocationEvidence[] }> {
  const anchors = (await trustAnchorsPem(services, em)).map((pem) => new X509Certificate(pem));
  const available = dedupe([...carried, ...anchors]);

  // Every chain, from each carried certificate up to a root, through what is known.
  const inChains = new Map<string, X509Certificate>();
  const issuerOf = new Map<string, X509Certificate>();
  for (const certificate of carried) {
    for (let at: X509Certificate | undefined = certificate, depth = 0; at && depth < 10; depth++) {
      if (inChains.has(at.fingerprint256)) break;
      inChains.set(at.fingerprint256, at);
      const current: X509Certificate = at;
      if (isSelfIssued(current)) break;
      const issuer = available.find((candidate) => candidate !== current && issuedBy(current, candidate));
      if (issuer) issuerOf.set(current.fingerprint256, issuer);
      at = issuer;
    }
  }

  const { timeoutMs, budgetMs } = services.config.ltvRevocation;
  const options = { timeoutMs, publicOnly: services.config.env === 'production', budget: AbortSignal.timeout(budgetMs) };
  const atOnce = limitTo(LOOKUPS_AT_ONCE);
  // Chains that end at a trust anchor first (the signatures this service stands behind): what an uploaded
  // document brings may use up the lookups, never before those.
  const anchorPrints = new Set(anchors.map((anchor) => anchor.fingerprint256));
  const reachesAnchor = (certificate: X509Certificate) => {
    for (let at: X509Certificate | undefined = certificate, depth = 0; at && depth < 10; depth++) {
      if (anchorPrints.has(at.fingerprint256)) return 1;
      at = issuerOf.get(at.fingerprint256);
    }
    return 0;
  };
  const below = [...inChains.values()]
    .filter((certificate) => !isSelfIssued(certificate))
    .sort((a, b) => reachesAnchor(b) - reachesAnchor(a));
  const evidence = await Promise.all(
    below.map((certificate, index): Promise<RevocationEvidence> => {
      const issuer = issuerOf.get(certificate.fingerprint256);
      if (!issuer) return Promise.resolve(unavailable('its issuer is not in the document nor a trust anchor'));
      const learned = known.get(certificate.fingerprint256);
      if (learned) return Promise.resolve(learned);
      if (index >= MAX_LOOKUPS) {
        return Promise.resolve(unavailable(`not asked: at most ${MAX_LOOKUPS} certificates of a document are looked up`));
      }
      return atOnce(() => fetchRevocation(certificate.toString(), issuer.toString(), options));
    }),
  );
  return { inChains, below, evidence };
}

function unavailable(problem: string): RevocationEvidence {
  return { status: 'unavailable', source: null, data: null, producedAt: null, problems: [problem] };
}

/** The certificates a CMS carries, and those of its signature time-stamp token. */
function certificatesIn(cms: Uint8Array): X509Certificate[] {
  try {
    const parsed = parseSignedData(cms);
    const token = parsed.signerInfo.unsignedAttributes.get(OID.signatureTimeStampToken)?.[0];
    return [...parsed.certificates, ...(token ? parseSignedData(token).certificates : [])];
  } catch (error) {
    if (error instanceof DerError) return [];
    throw error;
  }
}

function isSelfIssued(certificate: X509Certificate): boolean {
  return issuedBy(certificate, certificate);
}

function dedupe(certificates: X509Certificate[]): X509Certificate[] {
  const byPrint = new Map<string, X509Certificate>();
  for (const certificate of certificates) byPrint.set(certificate.fingerprint256, certificate);
  return [...byPrint.values()];
}
