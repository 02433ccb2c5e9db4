import { readFile } from 'node:fs/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { openPkcs12 } from '../../platform/crypto/pkcs12';
import type { AppServices } from '../../platform/services';
import type { SigningIdentity } from './cms-sign';
import { sandboxAuthority } from './sandbox-authority';

/**
 * The key `suresign` signatures are made with. Configured as a PKCS#12 (PLATFORM_SIGNING_PFX and its
 * password), as production requires; in sandbox without one, a document-signing certificate is issued by the
 * sandbox root CA the first time and kept sealed in the database, so every process signs with the same key.
 */
export async function platformSigningIdentity(services: AppServices, em: EntityManager): Promise<SigningIdentity> {
  const { platformSigningPfx } = services.config;
  if (platformSigningPfx) return signingIdentityFromPfx(platformSigningPfx);
  return sandboxAuthority.get().documentSigner(services, em);
}

/** The key, certificate and chain of a configured PKCS#12 file. */
export async function signingIdentityFromPfx(pfx: { path: string; password: string }): Promise<SigningIdentity> {
  const contents = openPkcs12(await readFile(pfx.path), pfx.password);
  return { privateKeyPem: contents.privateKeyPem, certificatePem: contents.certificatePem, chainPems: contents.chainPems };
}
