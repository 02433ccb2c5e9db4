import type { EntityManager } from '@mikro-orm/postgresql';
import type { EspConfig } from '../../../config';
import type { AppServices } from '../../../platform/services';
import type { SigningIdentity } from '../cms-sign';
import { signingIdentityFromPfx } from '../platform-identity';
import { sandboxAuthority } from '../sandbox-authority';
import { buildEsignRequest, type EsignDocumentHash, type EsignVersion } from './cca/esign-request';
import { parseAndVerifyEsignResponse, verifyEsignSignature, type ParsedEsignResponse } from './cca/esign-response';
import { parseUntrustedXml } from './cca/xml-dsig';

/**
 * The ASP side of the CCA eSign API, for one configured ESP: the request (signed with the ASP's key) that the
 * signer's browser carries to a 2.1 ESP, or this service POSTs to a 3.2 one (./esp-request-post.ts), and the check of the ESP's response (signed with its key) and of the PKCS#7 it
 * returns. It knows no session: the caller keeps the transaction. The built-in sandbox ESP is reached the same way,
 * over HTTP through its gateway (mounted by the sandbox module), with keys the sandbox keeps in the database.
 */

export function espConfig(services: AppServices, backend: string): EspConfig | undefined {
  return Object.hasOwn(services.config.esps, backend) ? services.config.esps[backend] : undefined;
}

/** The key the ASP signs requests with: ESP_<NAME>_ASP_PFX, or for the built-in sandbox one the sandbox root issued. */
export async function aspIdentity(services: AppServices, em: EntityManager, esp: EspConfig): Promise<SigningIdentity> {
  if (esp.aspPfx) return signingIdentityFromPfx(esp.aspPfx);
  return sandboxAuthority.get().aspSigner(services, em);
}

/** The certificate ESP responses must be signed with: ESP_<NAME>_CERT, or the built-in sandbox gateway's own. */
export async function espResponseCertificate(services: AppServices, em: EntityManager, esp: EspConfig): Promise<string> {
  if (esp.certificatePem) return esp.certificatePem;
  return (await sandboxAuthority.get().espResponder(services, em)).certificatePem;
}

export interface EspRequest {
  /** 2.1: where the signer's browser POSTs `fields` (an HTML form, application/x-www-form-urlencoded). */
  url: string;
  fields: Record<string, string>;
  version: EsignVersion;
  /** The signed request itself: 3.2 POSTs it server to server (postEspRequest). */
  xml: string;
}

/**
 * The signed `<Esign>` request for up to five document hashes (one `<InputHash>` each), as the form fields the ESP's gateway reads (`eSignRequest`,
 * `aspTxnID`, `Content-Type`: the names eSign ESPs document). `authMode` is the session's (2.1 carries it; in 3.2
 * the signer chooses on the ESP's pages).
 */
export async function buildEspRequest(
  services: AppServices,
  em: EntityManager,
  esp: EspConfig,
  input: {
    txn: string;
    /** `docUrl`, 3.2 only: where the ESP may fetch the document to show it. */
    documents: EsignDocumentHash[];
    authMode: number;
    responseUrl: string;
    redirectUrl: string;
  },
): Promise<EspRequest> {
  const identity = await aspIdentity(services, em, esp);
  const xml = buildEsignRequest({
    version: esp.version,
    txn: input.txn,
    aspId: esp.aspId,
    responseUrl: input.responseUrl,
    redirectUrl: esp.version === '3.2' ? input.redirectUrl : undefined,
    maxWaitPeriod: esp.version === '3.2' ? Math.max(1, Math.ceil(esp.timeoutSeconds / 60)) : undefined,
    authMode: esp.version === '2.1' ? (input.authMode === 2 ? 2 : 1) : undefined,
    documents: input.documents.map(({ docUrl, ...document }) => ({
      ...document,
      ...(esp.version === '3.2' && docUrl ? { docUrl } : {}),
    })),
    signer: { privateKeyPem: identity.privateKeyPem, certificatePem: identity.certificatePem },
  });
  return {
    url: esp.url,
    fields: { eSignRequest: xml, aspTxnID: input.txn, 'Content-Type': 'application/xml' },
    version: esp.version,
    xml,
  };
}

/**
 * The `txn` a response names, read without trusting it: only to find whose audit trail a refused response belongs
 * to. Null when the XML cannot be read at all.
 */
export function claimedTxn(xml: string): string | null {
  try {
    const txn = parseUntrustedXml(xml).documentElement?.getAttribute('txn');
    return txn && /^[!#-&(-~]{1,100}$/.test(txn) ? txn : null;
  } catch {
    return null;
  }
}

/** The response, its XML signature checked against the ESP's certificate; EsignXmlError when it does not hold. */
export async function readEspResponse(
  services: AppServices,
  em: EntityManager,
  esp: EspConfig,
  xml: string,
): Promise<ParsedEsignResponse> {
  return parseAndVerifyEsignResponse(xml, await espResponseCertificate(services, em, esp));
}

/** The returned PKCS#7 signs exactly `sha256Hex` with the returned certificate. */
export function checkReturnedSignature(cms: Uint8Array, sha256Hex: string, certificatePem: string): string[] {
  const check = verifyEsignSignature(cms, sha256Hex, certificatePem);
  return check.valid ? [] : check.problems;
}
