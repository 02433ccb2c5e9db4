import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';
import { createRootCa, type KeyAndCertificate } from './certificates';
import { platformKey } from './platform-identity';

const ROOT_KEY = 'sandbox-root-ca';

/**
 * The sandbox's root CA, made the first time it is needed and kept sealed in the database (every process issues
 * from the same one). It issues the sandbox TSA's certificate. Never trusted outside the sandbox.
 */
export async function sandboxRootCa(services: AppServices, em: EntityManager): Promise<KeyAndCertificate> {
  return platformKey(services, em, ROOT_KEY, () => ({
    ...createRootCa('Esign Sandbox Root CA', 'Esign Sandbox (not trusted)'),
    chainPems: [],
  }));
}
