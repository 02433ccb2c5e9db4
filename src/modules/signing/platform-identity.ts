import { X509Certificate } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
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

interface OpenedPfx {
  /** The file as it was opened: a file replaced or rewritten is opened again. */
  version: string;
  password: string;
  identity: SigningIdentity;
  validFrom: number;
  validTo: number;
}

/** Opened files by path: opening one (node-forge's key derivation, in JavaScript) took about 20 ms of the event loop. */
const opened = new Map<string, OpenedPfx>();

/** The key, certificate and chain of a configured PKCS#12 file, opened again only when the file or the password changes. */
export async function signingIdentityFromPfx(pfx: { path: string; password: string }): Promise<SigningIdentity> {
  const file = await stat(pfx.path);
  const version = `${file.dev}:${file.ino}:${file.size}:${file.mtimeMs}`;
  const now = Date.now();
  let known = opened.get(pfx.path);
  // Outside its certificate's validity it is opened again, so that openPkcs12 refuses it as it always did.
  if (!known || known.version !== version || known.password !== pfx.password || now < known.validFrom || now > known.validTo) {
    const contents = openPkcs12(await readFile(pfx.path), pfx.password);
    const certificate = new X509Certificate(contents.certificatePem);
    known = {
      version,
      password: pfx.password,
      identity: { privateKeyPem: contents.privateKeyPem, certificatePem: contents.certificatePem, chainPems: contents.chainPems },
      validFrom: certificate.validFromDate.getTime(),
      validTo: certificate.validToDate.getTime(),
    };
    opened.set(pfx.path, known);
  }
  return { ...known.identity, chainPems: [...known.identity.chainPems] };
}
