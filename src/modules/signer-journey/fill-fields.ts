import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { recordAudit, type RequestOrigin } from '../audit';
import { fillSignerValues, keepValues, kindOf, lockTurn, signerByToken, type Signer } from '../esign/signer-side';
import { storeBytes } from '../files';
import { EspTransaction } from './aadhaar/esp-transaction.entity';
import { assertChecksPassed } from './checks/checks';
import { readUploadedImage } from './uploaded-image';

/** The largest image a signer may apply to a field (a company seal). */
export const FIELD_IMAGE_MAX_BYTES = 2 * 1024 * 1024;

/**
 * The signer whose turn it is fills their fields (`values`: field_id to value) once their checks have passed. The
 * rules are the element's (the page checks the same first); the values are kept, all or none, until the signature
 * writes them into the PDF in the signer's own update.
 */
export async function fillFields(
  em: EntityManager,
  token: string | null,
  input: { values?: unknown },
  origin: RequestOrigin,
): Promise<void> {
  const found = await signerByToken(em, token);
  await em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    assertChecksPassed(signer);
    await refuseWhileAtEsp(tx, signer);
    fillSignerValues(signer, input.values, new Date());
    recordAudit(tx, {
      session,
      signer,
      event: 'fields_filled',
      origin,
      details: { field_ids: Object.keys(input.values as object) },
    });
  });
}

/**
 * An image field (a company seal) the signer applies: a JPEG or PNG read in the worker pool, kept as an asset of the
 * session's owner, and made the field's value.
 */
export async function fillImageField(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  upload: { fieldId: string; type: string; bytes: Buffer | undefined },
  origin: RequestOrigin,
): Promise<void> {
  const found = await signerByToken(em, token);
  const field = `values.${upload.fieldId}`;
  const element = found.elements.find((candidate) => candidate.field_id === upload.fieldId);
  if (!element || !kindOf(element).assetValue || element.read_only)
    throw AppError.badRequest([{ field, problem: 'not an image field this signer fills' }]);
  const { bytes, facts } = await readUploadedImage(services, upload, { field, noun: 'image' });
  await em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    assertChecksPassed(signer);
    await refuseWhileAtEsp(tx, signer);
    const stored = await storeBytes(
      services.blobs,
      tx,
      {
        ownerId: session.user.id,
        kind: 'asset',
        name: `${upload.fieldId}-${signer.id}.${facts.mime === 'image/png' ? 'png' : 'jpg'}`,
        mime: facts.mime,
        widthPx: facts.width,
        heightPx: facts.height,
      },
      bytes,
    );
    keepValues(signer, new Map([[upload.fieldId, stored.id]]), new Date());
    recordAudit(tx, {
      session,
      signer,
      event: 'fields_filled',
      origin,
      details: { field_ids: [upload.fieldId], file_id: stored.id },
    });
  });
}

/**
 * An Aadhaar signer's open eSign transaction holds the document with the values as they were when it started (the
 * ESP signs that hash), and a held batch holds documents signed with them: they cannot change under either (`409`);
 * restarting the transaction takes the new values.
 */
async function refuseWhileAtEsp(tx: EntityManager, signer: Signer): Promise<void> {
  const open = await tx.findOne(EspTransaction, {
    signer: signer.id,
    status: { $in: ['pending', 'held'] },
    expiresAt: { $gt: new Date() },
  });
  if (open)
    throw new AppError('conflict', {
      message:
        'an eSign transaction of this signer is open with the values given before it: finish or cancel it at the ESP first',
    });
}
