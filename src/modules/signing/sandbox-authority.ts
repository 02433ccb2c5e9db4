import type { EntityManager } from '@mikro-orm/postgresql';
import { Slot } from '../../platform/module';
import type { AppServices } from '../../platform/services';
import type { SigningIdentity } from './cms-sign';

/**
 * What signing falls back on when no key is configured (the sandbox, and the built-in sandbox ESP that
 * ALLOW_SANDBOX_ESP admits in production): the keys and root CA of the sandbox module, which fills this slot.
 * Signing never imports the sandbox; the composition (src/modules.ts) hands it in.
 */
export interface SandboxAuthority {
  /** Signs `suresign` signatures when PLATFORM_SIGNING_PFX is not set. */
  documentSigner(services: AppServices, em: EntityManager): Promise<SigningIdentity>;
  /** Signs the ASP's requests to the built-in sandbox ESP. */
  aspSigner(services: AppServices, em: EntityManager): Promise<SigningIdentity>;
  /** Signs the built-in sandbox ESP's responses. */
  espResponder(services: AppServices, em: EntityManager): Promise<SigningIdentity>;
  /** The sandbox root CA's certificate: a trust anchor of the verify report in sandbox. */
  rootCertificatePem(services: AppServices, em: EntityManager): Promise<string>;
}

export const sandboxAuthority = new Slot<SandboxAuthority>("signing's sandbox authority");
