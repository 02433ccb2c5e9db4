import type { EntityManager } from '@mikro-orm/postgresql';
import type { Pkcs12Contents } from '../../platform/crypto/pkcs12';
import { SecretBox } from '../../platform/crypto/secret-box';
import { AppError } from '../../platform/errors';
import { readWithin } from '../../platform/storage/read-within';
import { SpoolLimitExceeded } from '../../platform/storage/spool';
import type { WorkerPool } from '../../platform/workers/worker-pool';
import type { Actor } from '../../platform/auth/actor';
import { describeCertificate } from '../signing';
import { User } from '../users';
import { PfxCredential } from './pfx-credential.entity';

/** PKCS#12 files are small; anything larger is not one. */
export const MAX_PFX_BYTES = 256 * 1024;

export const pfxTooLarge = () =>
  new AppError('file_too_large', { errors: [{ field: 'file', problem: `larger than ${MAX_PFX_BYTES} bytes` }] });

export function pfxBox(secretsEncryptionKey: string): SecretBox {
  return new SecretBox(secretsEncryptionKey, 'pfx-credential');
}

export async function uploadPfx(
  em: EntityManager,
  untrusted: WorkerPool,
  actor: Actor,
  secretsEncryptionKey: string,
  input: { filename?: string; content: AsyncIterable<Uint8Array> | Iterable<Uint8Array>; password: string | undefined },
): Promise<PfxCredential> {
  // The limit is this use case's, whichever face the file came through: nothing larger is ever held.
  const bytes = await readWithin(input.content, MAX_PFX_BYTES).catch((error: unknown) => {
    throw error instanceof SpoolLimitExceeded ? pfxTooLarge() : error;
  });
  if (bytes.length === 0) throw new AppError('file_empty', { errors: [{ field: 'file', problem: 'no bytes' }] });
  if (input.password === undefined) throw AppError.missingFields(['password']);
  // The file sets its own key-derivation iteration count (node-forge derives in JavaScript): opening it is
  // work on attacker-supplied bytes, done in the worker pool within its time budget.
  const contents = await untrusted.run<Pkcs12Contents>('openPkcs12Task', { bytes, password: input.password });
  const sealed = pfxBox(secretsEncryptionKey).seal(
    JSON.stringify({
      privateKeyPem: contents.privateKeyPem,
      certificatePem: contents.certificatePem,
      chainPems: contents.chainPems,
    }),
  );
  // Names print as everywhere else in the service (the verify report): RFC 4514, most specific first.
  const names = describeCertificate(contents.certificatePem);
  const credential = em.create(PfxCredential, {
    user: em.getReference(User, actor.userId),
    name: (input.filename ?? 'certificate.pfx').replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 255) || 'certificate.pfx',
    subject: names.subject.slice(0, 1000),
    issuer: names.issuer.slice(0, 1000),
    serialNumber: contents.serialNumber.slice(0, 100),
    notBefore: contents.notBefore,
    notAfter: contents.notAfter,
    sealed,
  });
  await em.persistAndFlush(credential);
  return credential;
}

/** One of the caller's (not deleted) certificates; anything else is `404 not_found`. */
export async function getOwnPfx(em: EntityManager, actor: Actor, pfxId: string): Promise<PfxCredential> {
  const credential = await em.findOne(PfxCredential, { id: pfxId, user: actor.userId, deletedAt: null });
  if (!credential) throw new AppError('not_found', { errors: [{ field: 'pfx_id', problem: 'no such PFX among yours' }] });
  return credential;
}

export async function listOwnPfx(em: EntityManager, actor: Actor): Promise<PfxCredential[]> {
  return em.find(PfxCredential, { user: actor.userId, deletedAt: null }, { orderBy: { createdAt: 'desc', seq: 'desc' } });
}

/** Deleting forgets the key material at once; sessions that named it can no longer sign with it. */
export async function deletePfx(em: EntityManager, actor: Actor, pfxId: string): Promise<PfxCredential> {
  const credential = await getOwnPfx(em, actor, pfxId);
  credential.deletedAt = new Date();
  credential.sealed = '';
  await em.flush();
  return credential;
}

/** The key material, for the signing step only. */
export async function openPfxCredential(
  em: EntityManager,
  secretsEncryptionKey: string,
  pfxId: string,
): Promise<Pick<Pkcs12Contents, 'privateKeyPem' | 'certificatePem' | 'chainPems'>> {
  const credential = await em.findOneOrFail(PfxCredential, { id: pfxId, deletedAt: null }, { populate: ['sealed'] });
  return JSON.parse(pfxBox(secretsEncryptionKey).openText(credential.sealed));
}
