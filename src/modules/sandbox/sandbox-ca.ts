import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';
import {
  createRootCa,
  issueIntermediateCa,
  issueSigningCertificate,
  platformKey,
  type KeyAndCertificate,
  type RevocationPointers,
  type SandboxAuthority,
  type SigningIdentity,
} from '../signing';

const TEN_YEARS_MS = 10 * 365 * 86_400_000;

const ROOT_KEY = 'sandbox-root-ca';
const ESP_CA_KEY = 'sandbox-esp-intermediate-ca';
const DSC_CA_KEY = 'sandbox-dsc-intermediate-ca';

/** The sandbox's CAs by the name their CRL and caIssuers URLs use. */
export type SandboxIssuer = 'root' | 'esp' | 'dsc';
export const SANDBOX_ISSUERS: readonly SandboxIssuer[] = ['root', 'esp', 'dsc'];

/**
 * The sandbox's one root CA, made the first time it is needed and kept sealed in the database (every process
 * issues from the same one). Everything the sandbox signs chains to it: the platform's document-signing
 * certificate, the sandbox ESP's CA (and so every Aadhaar certificate it issues), the sandbox TSA. In sandbox it
 * is a trust anchor of the verify report; it is never trusted anywhere else.
 */
export async function sandboxRootCa(services: AppServices, em: EntityManager): Promise<KeyAndCertificate> {
  return platformKey(services, em, ROOT_KEY, () => ({
    ...createRootCa('Esign Sandbox Root CA', 'Esign Sandbox (not trusted)'),
    chainPems: [],
  }));
}

/** The sandbox ESP's CA, an intermediate under the sandbox root (as a licensed CA sits under the CCA's root). */
export async function sandboxEspCa(
  services: AppServices,
  em: EntityManager,
): Promise<KeyAndCertificate & { chainPems: string[] }> {
  const root = await sandboxRootCa(services, em);
  return platformKey(services, em, ESP_CA_KEY, () => ({
    ...issueIntermediateCa(
      root,
      'Esign Sandbox ESP CA',
      'Esign Sandbox ESP (not trusted)',
      sandboxRevocationPointers(services, 'root'),
    ),
    chainPems: [root.certificatePem],
  }));
}

/**
 * The sandbox's DSC CA, an intermediate under the sandbox root as a licensed Certifying Authority (eMudhra, Capricorn,
 * Sify...) sits under the Root Certifying Authority of India: it issues the test DSCs developers load into a token
 * (POST /sandbox/dsc/certificates), and revokes them on request.
 */
export async function sandboxDscCa(
  services: AppServices,
  em: EntityManager,
): Promise<KeyAndCertificate & { chainPems: string[] }> {
  const root = await sandboxRootCa(services, em);
  return platformKey(services, em, DSC_CA_KEY, () => ({
    ...issueIntermediateCa(
      root,
      'Esign Sandbox DSC CA',
      'Esign Sandbox DSC (not trusted)',
      sandboxRevocationPointers(services, 'root'),
    ),
    chainPems: [root.certificatePem],
  }));
}

/**
 * A signing key of the sandbox's own (the document signer, the sandbox ASP, the sandbox ESP's response signer):
 * a ten-year certificate the sandbox root issues the first time `keyName` is needed, kept sealed in the database.
 */
export async function sandboxSigningIdentity(
  services: AppServices,
  em: EntityManager,
  keyName: string,
  commonName: string,
): Promise<SigningIdentity> {
  const root = await sandboxRootCa(services, em);
  return platformKey(services, em, keyName, () => {
    const now = Date.now();
    const issued = issueSigningCertificate(
      root,
      { commonName, organization: 'Esign Sandbox (not trusted)', country: 'IN' },
      { notBefore: new Date(now - 3_600_000), notAfter: new Date(now + TEN_YEARS_MS - 86_400_000) },
      { revocation: sandboxRevocationPointers(services, 'root') },
    );
    return { privateKeyPem: issued.privateKeyPem, certificatePem: issued.certificatePem, chainPems: [root.certificatePem] };
  });
}

export function sandboxIssuer(services: AppServices, em: EntityManager, issuer: SandboxIssuer): Promise<KeyAndCertificate> {
  if (issuer === 'root') return sandboxRootCa(services, em);
  return issuer === 'esp' ? sandboxEspCa(services, em) : sandboxDscCa(services, em);
}

/**
 * What the sandbox writes into every certificate it issues: the issuer's CRL, the OCSP responder, and the issuer's
 * certificate, all served by this service under /sandbox (see revocation/sandbox-revocation.ts).
 */
export function sandboxRevocationPointers(services: AppServices, issuer: SandboxIssuer): RevocationPointers {
  const base = `${services.config.publicUrl}/sandbox`;
  return { crlUrl: `${base}/ca/${issuer}.crl`, ocspUrl: `${base}/ocsp`, caIssuersUrl: `${base}/ca/${issuer}.cer` };
}

/** Named anew when the sandbox chain moved under the one sandbox root CA (earlier databases keep theirs unused). */
const DOCUMENT_SIGNER_KEY = 'sandbox-document-signer';
const ASP_KEY = 'sandbox-asp-request-signer';
const ESP_RESPONSE_KEY = 'sandbox-esp-response-signer';

/** The sandbox ESP gateway's response-signing key, issued by the sandbox root. */
export function sandboxEspResponder(services: AppServices, em: EntityManager): Promise<SigningIdentity> {
  return sandboxSigningIdentity(services, em, ESP_RESPONSE_KEY, 'Esign Sandbox ESP Gateway');
}

/** What signing falls back on when no key is configured: these keys, all issued by the sandbox root. */
export const sandboxCaAuthority: SandboxAuthority = {
  documentSigner: (services, em) => sandboxSigningIdentity(services, em, DOCUMENT_SIGNER_KEY, 'Esign Sandbox Document Signer'),
  aspSigner: (services, em) => sandboxSigningIdentity(services, em, ASP_KEY, 'Esign Sandbox ASP'),
  espResponder: sandboxEspResponder,
  rootCertificatePem: async (services, em) => (await sandboxRootCa(services, em)).certificatePem,
};
