import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';
import { createRootCa, type KeyAndCertificate } from './certificates';
import { platformKey } from './platform-keys';

const ROOT_KEY = 'sandbox-root-ca';

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
