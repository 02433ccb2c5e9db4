import { readFile } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { certificatesInPem } from '../../platform/crypto/pem';
import type { AppServices } from '../../platform/services';
import { sandboxAuthority } from './sandbox-authority';

/**
 * The certificates signatures are judged against (`certificate_chain_valid`): the TRUST_ANCHORS bundle (a PEM file,
 * or the PEM text itself), the CAs DSC signers chain to (DSC_TRUST_ANCHORS), and in sandbox the sandbox root CA, to
 * which everything the sandbox signs chains.
 */
export async function trustAnchorsPem(services: AppServices, em: EntityManager): Promise<string[]> {
  const anchors = [...(await caBundle(services.config.trustAnchors)), ...(await caBundle(services.config.dsc.trustAnchors))];
  if (services.config.env === 'sandbox') anchors.push(await sandboxAuthority.get().rootCertificatePem(services, em));
  return anchors;
}

/**
 * The CAs a DSC signer's certificate must chain to before its signature is accepted: DSC_TRUST_ANCHORS (in
 * production the Root Certifying Authority of India's certificates), and in sandbox the sandbox root, under which the
 * sandbox's DSC CA issues test certificates. Narrower than trustAnchorsPem: a TSA's or a foreign CA's root a
 * deployment trusts for verification does not make a DSC.
 */
export async function dscTrustAnchorsPem(services: AppServices, em: EntityManager): Promise<string[]> {
  const anchors = await caBundle(services.config.dsc.trustAnchors);
  if (services.config.env === 'sandbox') anchors.push(await sandboxAuthority.get().rootCertificatePem(services, em));
  return anchors;
}

/** The CA certificates of a PEM bundle file, or of PEM text itself; anything else in it is left out. */
async function caBundle(configured: string | undefined): Promise<string[]> {
  const bundle = configured ? (configured.includes('-----BEGIN') ? configured : await readFile(configured, 'latin1')) : '';
  return certificatesInPem(bundle).filter((pem) => {
    try {
      return new X509Certificate(pem).ca;
    } catch {
      return false;
    }
  });
}
