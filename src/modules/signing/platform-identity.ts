import { readFile } from 'node:fs/promises';
import { type EntityManager, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { openPkcs12 } from '../../platform/crypto/pkcs12';
import { SecretBox } from '../../platform/crypto/secret-box';
import type { AppServices } from '../../platform/services';
import { createRootCa, issueSigningCertificate } from './certificates';
import type { SigningIdentity } from './cms-sign';
import { PlatformKey } from './platform-key.entity';

const PLATFORM_SIGNER = 'platform-document-signer';
const TEN_YEARS_MS = 10 * 365 * 86_400_000;

function box(services: AppServices): SecretBox {
  return new SecretBox(services.config.secretsEncryptionKey, 'platform-key');
}

/**
 * A key the platform keeps, by name: made by `generate` the first time anyone needs it and kept sealed in
 * the database, so that every process uses the same one (a concurrent first generation loses to the winner).
 */
export async function platformKey(
  services: AppServices,
  em: EntityManager,
  name: string,
  generate: () => SigningIdentity,
): Promise<SigningIdentity> {
  const stored = await em.fork().findOne(PlatformKey, { name });
  if (stored) return JSON.parse(box(services).openText(stored.sealed)) as SigningIdentity;
  const identity = generate();
  try {
    await em.fork().persistAndFlush(em.create(PlatformKey, { name, sealed: box(services).seal(JSON.stringify(identity)) }));
    return identity;
  } catch (error) {
    if (!(error instanceof UniqueConstraintViolationException)) throw error;
    const winner = await em.fork().findOneOrFail(PlatformKey, { name });
    return JSON.parse(box(services).openText(winner.sealed)) as SigningIdentity;
  }
}

/**
 * The key `suresign` signatures are made with. Configured as a PKCS#12 (PLATFORM_SIGNING_PFX and its
 * password), as production requires; in sandbox without one, a root CA and a document-signing certificate
 * are generated the first time and kept sealed in the database, so every process signs with the same key.
 */
export async function platformSigningIdentity(services: AppServices, em: EntityManager): Promise<SigningIdentity> {
  const { platformSigningPfx } = services.config;
  if (platformSigningPfx) {
    const contents = openPkcs12(await readFile(platformSigningPfx.path), platformSigningPfx.password);
    return { privateKeyPem: contents.privateKeyPem, certificatePem: contents.certificatePem, chainPems: contents.chainPems };
  }
  return platformKey(services, em, PLATFORM_SIGNER, () => {
    const root = createRootCa('Esign Sandbox Root CA', 'Esign Sandbox (not trusted)');
    const now = Date.now();
    const signer = issueSigningCertificate(
      root,
      { commonName: 'Esign Sandbox Document Signer', organization: 'Esign Sandbox (not trusted)', country: 'IN' },
      { notBefore: new Date(now - 3_600_000), notAfter: new Date(now + TEN_YEARS_MS - 86_400_000) },
    );
    return { privateKeyPem: signer.privateKeyPem, certificatePem: signer.certificatePem, chainPems: [root.certificatePem] };
  });
}
