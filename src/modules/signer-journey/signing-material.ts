import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import type { Signer } from '../esign/signer-side';
import { openPfxCredential } from '../pfx';
import { platformSigningIdentity, signDetachedCms, type SigningIdentity } from '../signing';

/** What signs the byte ranges of a signature: a key held here (suresign, PFX). Aadhaar signers sign at their ESP. */
export interface SigningMaterial {
  sign(ranges: readonly Uint8Array[]): Promise<Uint8Array>;
  /** The signing certificate and its chain, as the CMS will carry them. */
  certificatesPem: string[];
}

/** A key held here: the platform's identity for suresign signers, the signer's stored PFX otherwise. */
export async function platformOrPfx(services: AppServices, em: EntityManager, signer: Signer): Promise<SigningMaterial> {
  let identity: SigningIdentity;
  if (signer.signType === 'suresign') identity = await platformSigningIdentity(services, em);
  else {
    try {
      identity = await openPfxCredential(em, services.config.secretsEncryptionKey, signer.pfxId!);
    } catch {
      throw new AppError('conflict', {
        message: 'the PFX certificate of this signer was deleted; the session cannot be signed with it',
      });
    }
  }
  return {
    sign: (content) => signDetachedCms(content, identity),
    certificatesPem: [identity.certificatePem, ...identity.chainPems],
  };
}
