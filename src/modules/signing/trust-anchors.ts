import { readFile } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { certificatesInPem } from '../../platform/crypto/pem';
import type { AppServices } from '../../platform/services';
import { sandboxAuthority } from './sandbox-authority';

/**
 * The certificates signatures are judged against (`certificate_chain_valid`): the TRUST_ANCHORS bundle (a PEM file,
 * or the PEM text itself), and in sandbox the sandbox root CA, to which everything the sandbox signs chains.
 */
export async function trustAnchorsPem(services: AppServices, em: EntityManager): Promise<string[]> {
  const configured = services.config.trustAnchors;
  const bundle = configured ? (configured.includes('-----BEGIN') ? configured : await readFile(configured, 'latin1')) : '';
  const anchors = certificatesInPem(bundle).filter((pem) => {
    try {
      return new X509Certificate(pem).ca;
    } catch {
      return false;
    }
  });
  if (services.config.env === 'sandbox') anchors.push(await sandboxAuthority.get().rootCertificatePem(services, em));
  return anchors;
}
