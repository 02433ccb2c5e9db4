import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../../platform/services';
import { readAuditTrail, type AuditEvent } from '../../audit';
import {
  addLongTermValidation,
  fillSignature,
  platformSigningIdentity,
  signDetachedCms,
  signedRange,
  timestampSignature,
  trustAnchorsPem,
  type DocumentVerification,
  type KnownRevocation,
  type LongTermValidation,
  type PreparedSignature,
  type SignatureAppearance,
  type SignatureReport,
  type SigningIdentity,
} from '../../signing';
import { EsignDocument, EsignSession, Signer } from '../esign-session.entity';
import { signerFieldValues } from '../elements/field-values';
import { signerPartInLanguage } from './certificate-languages';
import type { CertificateSignatureBox, CompletionCertificateFacts, CompletionSigner } from './render-completion-certificate';

/** The completed envelope and its certificate of completion, all ready to store. */
export interface CompletedEnvelope {
  /**
   * Each document's PDF as the session keeps it, by position: with long-term validation data, and on the first the
   * certificate appended when the session asks.
   */
  documents: Uint8Array[];
  /** The certificate of completion, a PDF signed by the platform's document-signing certificate. */
  certificate: Uint8Array;
  /** What the long-term validation step added to each document (by position), when it ran. */
  ltv: (LongTermValidation | undefined)[];
}

/**
 * Finishes a session's envelope at its last signature. The certificate of completion states every document's
 * fingerprints, every signer (how they signed, the certificate the documents' own verification reads, where from,
 * the checks passed) and the audit trail; the platform signs it (PAdES, time-stamped when a TSA is configured).
 *
 * Without `append_certificate` every document gets its long-term validation data first, and the certificate states
 * the fingerprints of those final files (what the downloads serve). With it, the certificate states the fingerprint
 * of the first document as the signers left it, is appended to it as one incremental update its own platform
 * signature covers (every earlier signature stays valid; the revision reads `pages_appended`), and the long-term
 * validation data of that document then covers every signature, the platform's included.
 */
export async function completeEnvelope(
  services: AppServices,
  tx: EntityManager,
  session: EsignSession,
  /** Every document's last signed revision, by position. */
  signedPdfs: Uint8Array[],
  last: { signer: Signer; signedAt: Date },
  /** Revocation looked up before the transaction (prefetchRevocation): reused, not asked again. */
  knownRevocation?: KnownRevocation,
): Promise<CompletedEnvelope> {
  const identity = await platformSigningIdentity(services, tx);
  const withLtv = (pdf: Uint8Array) =>
    services.config.padesLtv ? addLongTermValidation(services, tx, pdf, knownRevocation) : Promise.resolve(undefined);
  const appendsTo = (position: number) => session.appendCertificate && position === 0;

  const ltv: (LongTermValidation | undefined)[] = [];
  const documents = [...signedPdfs];
  for (const [position, pdf] of documents.entries()) {
    if (appendsTo(position)) continue;
    ltv[position] = await withLtv(pdf);
    documents[position] = ltv[position]?.pdf ?? pdf;
  }
  const facts = await certificateFacts(services, tx, session, documents, last, identity);
  const rendered = await services.untrusted.run<{ pdf: Uint8Array; signatureBox: CertificateSignatureBox }>(
    'renderCompletionCertificateTask',
    facts,
  );
  const appearance = platformAppearance(identity);

  // The certificate as a file of its own: its pages, a field for the platform's signature, the signature.
  const prepared = await services.untrusted.run<Uint8Array>('prepareForSigningTask', {
    pdf: rendered.pdf,
    signers: [{ fieldName: appearance.fieldName, signatureBoxes: [rendered.signatureBox] }],
    images: [],
  });
  let certificate = await signPrepared(
    services,
    identity,
    await services.untrusted.run<PreparedSignature>('buildSignatureUpdateTask', { pdf: prepared, appearance }),
  );
  certificate = (await withLtv(certificate))?.pdf ?? certificate;

  if (appendsTo(0)) {
    const update = await services.untrusted.run<PreparedSignature>('buildAppendedPagesSignatureUpdateTask', {
      pdf: documents[0],
      pages: rendered.pdf,
      appearance,
      box: rendered.signatureBox,
    });
    const appended = await signPrepared(services, identity, update);
    ltv[0] = await withLtv(appended);
    documents[0] = ltv[0]?.pdf ?? appended;
  }
  return { documents, certificate, ltv };
}

async function signPrepared(services: AppServices, identity: SigningIdentity, prepared: PreparedSignature): Promise<Uint8Array> {
  const cms = await signDetachedCms(signedRange(prepared), identity);
  return fillSignature(prepared, await timestampSignature(services.config.tsa, cms));
}

function platformAppearance(identity: SigningIdentity): SignatureAppearance {
  const time = new Date();
  const issuer = commonName(identity.certificatePem);
  return {
    // Random, so that no field of an uploaded document can carry the name.
    fieldName: `CompletionCertificate-${randomBytes(6).toString('hex')}`,
    signerName: issuer,
    reason: 'Certificate of completion',
    time,
    appearanceLines: [
      'Certificate of completion',
      `Digitally signed by ${issuer}`,
      `Date: ${time.toISOString().replace('T', ' ').slice(0, 19)} UTC`,
    ],
  };
}

function commonName(certificatePem: string): string {
  const subject = new X509Certificate(certificatePem).subject;
  return /^CN=(.*)$/m.exec(subject)?.[1] ?? subject.replace(/\n/g, ', ');
}

/** What the certificate states, read from the session's rows, its audit trail and the signed documents themselves. */
async function certificateFacts(
  services: AppServices,
  tx: EntityManager,
  session: EsignSession,
  signedPdfs: Uint8Array[],
  last: { signer: Signer; signedAt: Date },
  identity: SigningIdentity,
): Promise<CompletionCertificateFacts> {
  const documents = await tx.find(EsignDocument, { session }, { orderBy: { position: 'asc' }, populate: ['file'] });
  const signers = await tx.find(Signer, { session }, { orderBy: { position: 'asc' } });
  const events = await readAuditTrail(tx, session.id);
  // The documents' own verification names each signer's certificate and how far its signature reaches: a signer's
  // line reads their signature in the first document they signed.
  const trustedRootsPem = await trustAnchorsPem(services, tx);
  const byField = new Map<string, SignatureReport>();
  for (const pdf of signedPdfs) {
    const verification = await services.untrusted.run<DocumentVerification>('verifyPdfTask', {
      pdf,
      options: { trustedRootsPem },
    });
    for (const report of verification.signatures) if (!byField.has(report.field_name)) byField.set(report.field_name, report);
  }
  const signedEvents = new Map(
    events.filter((event) => event.event === 'signed' && event.signer).map((event) => [event.signer!.id, event]),
  );
  const names = new Map(signers.map((signer) => [signer.id, signer.fullName]));
  return {
    sessionId: session.id,
    documents: documents.map((document) => {
      const signed = signedPdfs[document.position]!;
      return {
        name: document.name,
        pageCount: document.file.pageCount ?? 0,
        original: { sha256: document.file.sha256, bytes: document.file.sizeBytes },
        signed: { sha256: createHash('sha256').update(signed).digest('hex'), bytes: signed.byteLength },
      };
    }),
    createdAt: instant(session.createdAt),
    completedAt: instant(last.signedAt),
    signingOrder: session.signingOrder,
    appended: session.appendCertificate,
    signers: signers.map((signer) =>
      signerFacts(
        signer,
        byField.get(signer.id),
        signedEvents.get(signer.id),
        signer.id === last.signer.id ? last.signedAt : undefined,
      ),
    ),
    events: events.map((event) => ({
      at: instant(event.at),
      event: event.event,
      signer: event.signer ? (names.get(event.signer.id) ?? event.signer.id) : null,
      ip: event.ip ?? null,
      details: event.details ? describeDetails(event.details) : null,
    })),
    issuer: commonName(identity.certificatePem),
  };
}

function signerFacts(
  signer: Signer,
  report: SignatureReport | undefined,
  signed: AuditEvent | undefined,
  signingNow: Date | undefined,
): CompletionSigner {
  const checks: string[] = [];
  if (signer.emailVerifiedAt) checks.push(`email verified ${instant(signer.emailVerifiedAt)}`);
  if (signer.mobileVerifiedAt) checks.push(`mobile verified ${instant(signer.mobileVerifiedAt)}`);
  if (signer.location) checks.push(`location (${signer.location.source})`);
  if (signer.nameMatch.status === 'completed' && signer.nameMatch.score !== null)
    checks.push(`name match score ${signer.nameMatch.score}`);
  if (signer.faceMatch.match_score !== null) {
    const liveness = signer.faceMatch.liveness_score !== null ? `, liveness ${signer.faceMatch.liveness_score}` : '';
    checks.push(`face match score ${signer.faceMatch.match_score}${liveness}`);
  }
  if (signer.signType === 'aadhaar' && signer.aadhaarCertDetails) checks.push('Aadhaar eKYC (ESP certificate)');
  if (signer.signType === 'dsc') checks.push('DSC checked: chain, validity, non-repudiation, revocation');
  const location = signer.location;
  const mobile = signer.mobile
    ? `${signer.countryCode ? `+${signer.countryCode.replace(/^\+/, '')} ` : ''}${signer.mobile}`
    : null;
  return {
    position: signer.position,
    name: signer.fullName,
    email: signer.email ?? null,
    mobile,
    signType:
      signer.signType === 'aadhaar'
        ? `aadhaar (auth mode ${signer.authMode})`
        : signer.signType === 'dsc'
          ? "dsc (the signer's own certificate, on their token)"
          : signer.signType,
    certificateSubject: report?.signer_subject ?? null,
    signedAt: signingNow ? instant(signingNow) : signer.completedAt ? instant(signer.completedAt) : null,
    signature: report ? signatureSummary(report) : null,
    ip: signed?.ip ?? null,
    userAgent: signed?.userAgent ?? null,
    location: location
      ? [
          location.latitude !== null && location.longitude !== null
            ? `${location.latitude.toFixed(5)}, ${location.longitude.toFixed(5)}`
            : null,
          location.accuracy_m !== null ? `accuracy ${Math.round(location.accuracy_m)} m` : null,
          location.distance_m !== null ? `${Math.round(location.distance_m)} m from the geofence centre` : null,
          `from the ${location.source === 'device' ? 'device' : 'IP address'}`,
        ]
          .filter(Boolean)
          .join(', ')
      : null,
    checks,
    inLanguage: signerPartInLanguage(signer, signingNow ?? signer.completedAt ?? null, mobile),
    fields: signerFieldValues(signer).map((field) => ({
      label: field.label ?? field.type,
      shown: field.shown,
      filled:
        field.filled_by === 'owner'
          ? 'prefilled by the sender'
          : field.filled_at
            ? `${field.filled_by === 'service' ? 'by the service' : 'by the signer'} ${instant(new Date(field.filled_at))}`
            : null,
    })),
  };
}

function signatureSummary(report: SignatureReport): string {
  const intact = report.byte_range_valid && report.digest_valid && report.signature_valid;
  const chain =
    report.certificate_chain_valid === null ? '' : report.certificate_chain_valid ? ', chain trusted' : ', chain not trusted';
  const level = report.pades_level ? `, PAdES ${report.pades_level}` : '';
  const stamped = report.timestamp?.valid && report.timestamp.time ? `, time-stamped ${report.timestamp.time}` : '';
  return `${intact ? 'valid' : 'INVALID'}${level}${chain}${stamped}`;
}

/** An audit event's details as `key: value` pairs; nested values as JSON. */
function describeDetails(details: Record<string, unknown>): string | null {
  const pairs = Object.entries(details)
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([key, value]) => `${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
  return pairs.length > 0 ? pairs.join('; ') : null;
}

function instant(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
