import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { hashToken } from '../../platform/auth/bearer';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { EsignSession } from '../esign/esign-session.entity';
import { recordSignature } from '../esign/record-signature';
import { Signer } from '../esign/signer.entity';
import { StoredFile } from '../files/stored-file.entity';
import { openPfxCredential } from '../pfx/manage-pfx';
import { signDetachedCms, type SigningIdentity } from './cms';
import { platformSigningIdentity } from './platform-identity';
import { prepareForSigning, type ImagePlacement } from './pdf/prepare-for-signing';
import { signIncrementally } from './pdf/sign-incrementally';

/** The signer a signer token opens; an unknown token is `401 unauthorized` (integrator tokens never match). */
export async function signerByToken(em: EntityManager, token: string | null): Promise<Signer> {
  const signer = token ? await em.findOne(Signer, { tokenHash: hashToken(token) }, { populate: ['session'] }) : null;
  if (!signer) throw new AppError('unauthorized');
  return signer;
}

export const fieldNameOf = (signer: Signer) => signer.id;

/**
 * The working PDF, prepared once before the first signature: image elements drawn, one signature field per
 * signer at its placements (stamp pages already in front, so pages shift by them). Stored as a new file that
 * becomes the session's current PDF.
 */
async function ensurePrepared(services: AppServices, tx: EntityManager, session: EsignSession): Promise<Buffer> {
  const current = await tx.findOneOrFail(StoredFile, { id: session.currentPdfFile.id });
  if (session.preparedAt) return services.blobs.getBytes(current.storageKey);

  const signers = await tx.find(Signer, { session }, { orderBy: { position: 'asc' } });
  const shift = session.stampPageCount;
  const imageElements = signers.flatMap((signer) =>
    signer.elements.filter((element) => element.type === 'image' && element.value),
  );
  const assets = new Map(
    (await tx.find(StoredFile, { id: imageElements.map((element) => element.value!), user: session.user, kind: 'asset' })).map(
      (file) => [file.id, file],
    ),
  );
  const images: ImagePlacement[] = [];
  for (const element of imageElements) {
    const asset = assets.get(element.value!);
    if (!asset) continue;
    images.push({
      ...element,
      page: element.page + shift,
      bytes: await services.blobs.getBytes(asset.storageKey),
      mime: asset.mime as ImagePlacement['mime'],
    });
  }
  const prepared = await prepareForSigning(
    await services.blobs.getBytes(current.storageKey),
    signers.map((signer) => ({
      fieldName: fieldNameOf(signer),
      signatureBoxes: signer.elements
        .filter((element) => element.type === 'signature')
        .map((element) => ({
          page: element.page + shift,
          x: element.x,
          y: element.y,
          width: element.width,
          height: element.height,
        })),
    })),
    images,
  );
  const file = tx.create(StoredFile, {
    user: session.user,
    kind: 'pdf',
    name: session.filename,
    mime: 'application/pdf',
    sizeBytes: prepared.length,
    sha256: createHash('sha256').update(prepared).digest('hex'),
    pageCount: current.pageCount,
    storageKey: '',
  });
  file.storageKey = `files/${session.user.id}/${file.id}`;
  await services.blobs.putBytes(file.storageKey, prepared, 'application/pdf');
  session.currentPdfFile = file;
  session.preparedAt = new Date();
  await tx.flush();
  return Buffer.from(prepared);
}

async function identityFor(services: AppServices, tx: EntityManager, signer: Signer): Promise<SigningIdentity> {
  if (signer.signType === 'suresign') return platformSigningIdentity(services, tx);
  if (signer.signType === 'pfx') {
    try {
      return await openPfxCredential(tx, services.config.secretsEncryptionKey, signer.pfxId!);
    } catch {
      throw new AppError('conflict', {
        message: 'the PFX certificate of this signer was deleted; the session cannot be signed with it',
      });
    }
  }
  throw new AppError('conflict', {
    message: 'Aadhaar signing goes through the ESP flow, which is not available on this deployment yet',
  });
}

/**
 * The signer whose turn it is signs, on consent: one incremental PAdES signature over the current PDF,
 * with its appearance at the signer's placements. The session row is locked for the whole step, so a
 * double submit cannot sign twice.
 */
export async function signAsSigner(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { consent?: boolean | null },
): Promise<EsignSession> {
  const found = await signerByToken(em, token);
  if (input.consent !== true)
    throw AppError.badRequest([{ field: 'consent', problem: 'the signer must consent to sign (consent: true)' }]);
  return em.transactional(async (tx) => {
    const session = await tx.findOneOrFail(EsignSession, { id: found.session.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const signer = await tx.findOneOrFail(Signer, { id: found.id });
    if (session.status !== 'pending') throw new AppError('conflict', { message: `the session is ${session.status}` });
    if (signer.status !== 'pending') throw new AppError('conflict', { message: `this signer is ${signer.status}` });
    if (signer.position !== session.signerIdx) throw new AppError('conflict', { message: 'it is not this signer’s turn yet' });

    const identity = await identityFor(services, tx, signer);
    const working = await ensurePrepared(services, tx, session);
    const time = new Date();
    const signed = await signIncrementally(working, {
      fieldName: fieldNameOf(signer),
      signerName: signer.fullName,
      reason: signer.reason,
      time,
      appearanceLines: [
        `Digitally signed by ${signer.fullName}`,
        `Date: ${time.toISOString().replace('T', ' ').slice(0, 19)} UTC`,
        ...(signer.reason ? [`Reason: ${signer.reason}`] : []),
      ],
      sign: (content) => signDetachedCms(content, identity),
    });
    return recordSignature(services, tx, { sessionId: session.id, signerId: signer.id, signedPdf: signed });
  });
}
