import { readFile } from 'node:fs/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { openPkcs12 } from '../../platform/crypto/pkcs12';
import { SecretBox } from '../../platform/crypto/secret-box';
import type { AppServices } from '../../platform/services';
import { createRootCa, issueSigningCertificate } from './certificates';
import type { SigningIdentity } from './cms';
import { PlatformKey } from './platform-key.entity';

const PLATFORM_SIGNER = 'platform-document-signer';
const TEN_YEARS_MS = 10 * 365 * 86_400_000;

function box(services: AppServices): SecretBox {
  return new SecretBox(services.config.secretsEncryptionKey, 'platform-key');
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
  const stored = await em.findOne(PlatformKey, { name: PLATFORM_SIGNER });
  if (stored) return JSON.parse(box(services).openText(stored.sealed)) as SigningIdentity;

  const root = createRootCa('Esign Sandbox Root CA', 'Esign Sandbox (not trusted)');
  const now = Date.now();
  const signer = issueSigningCertificate(
    root,
    { commonName: 'Esign Sandbox Document Signer', organization: 'Esign Sandbox (not trusted)', country: 'IN' },
    { notBefore: new Date(now - 3_600_000), notAfter: new Date(now + TEN_YEARS_MS - 86_400_000) },
  );
  const identity: SigningIdentity = {
    privateKeyPem: signer.privateKeyPem,
    certificatePem: signer.certificatePem,
    chainPems: [root.certificatePem],
  };
  try {
    await em
      .fork()
      .persistAndFlush(em.create(PlatformKey, { name: PLATFORM_SIGNER, sealed: box(services).seal(JSON.stringify(identity)) }));
    return identity;
  } catch (error) {
    // Another process generated it first: everyone uses that one.
    if (!(error instanceof UniqueConstraintViolationException)) throw error;
    const winner = await em.fork().findOneOrFail(PlatformKey, { name: PLATFORM_SIGNER });
    return JSON.parse(box(services).openText(winner.sealed)) as SigningIdentity;
  }
}
