import { readFile } from 'node:fs/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { openPkcs12 } from '../../platform/crypto/pkcs12';
import type { AppServices } from '../../platform/services';
import { issueSigningCertificate } from './certificates';
import type { SigningIdentity } from './cms-sign';
import { platformKey } from './platform-keys';
import { sandboxRevocationPointers, sandboxRootCa } from './sandbox-ca';

/** Named anew when the sandbox chain moved under the one sandbox root CA (earlier databases keep theirs unused). */
const PLATFORM_SIGNER = 'sandbox-document-signer';
const TEN_YEARS_MS = 10 * 365 * 86_400_000;

/**
 * The key `suresign` signatures are made with. Configured as a PKCS#12 (PLATFORM_SIGNING_PFX and its
 * password), as production requires; in sandbox without one, a document-signing certificate is issued by the
 * sandbox root CA the first time and kept sealed in the database, so every process signs with the same key.
 */
export async function platformSigningIdentity(services: AppServices, em: EntityManager): Promise<SigningIdentity> {
  const { platformSigningPfx } = services.config;
  if (platformSigningPfx) {
    const contents = openPkcs12(await readFile(platformSigningPfx.path), platformSigningPfx.password);
    return { privateKeyPem: contents.privateKeyPem, certificatePem: contents.certificatePem, chainPems: contents.chainPems };
  }
  const root = await sandboxRootCa(services, em);
  return platformKey(services, em, PLATFORM_SIGNER, () => {
    const now = Date.now();
    const signer = issueSigningCertificate(
      root,
      { commonName: 'Esign Sandbox Document Signer', organization: 'Esign Sandbox (not trusted)', country: 'IN' },
      { notBefore: new Date(now - 3_600_000), notAfter: new Date(now + TEN_YEARS_MS - 86_400_000) },
      { revocation: sandboxRevocationPointers(services, 'root') },
    );
    return { privateKeyPem: signer.privateKeyPem, certificatePem: signer.certificatePem, chainPems: [root.certificatePem] };
  });
}
