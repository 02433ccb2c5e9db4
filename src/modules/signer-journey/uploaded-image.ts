import { AppError, findAppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import type { ImageFacts } from '../files';

/**
 * An image a signer sends as the raw body (the face check's live photo, a seal for an image field): its declared
 * type must be JPEG or PNG, and the untrusted pool must read it as one; problems are named under `field`, calling it
 * a `noun` ("photo", "image").
 */
export async function readUploadedImage(
  services: AppServices,
  upload: { type: string; bytes: Buffer | undefined },
  { field, noun }: { field: string; noun: string },
): Promise<{ bytes: Buffer; facts: ImageFacts }> {
  if (upload.type !== 'image/jpeg' && upload.type !== 'image/png') {
    throw new AppError('unsupported_media_type', {
      errors: [{ field, problem: `send the ${noun} as image/jpeg or image/png` }],
    });
  }
  const bytes = upload.bytes;
  if (!bytes || bytes.length === 0) throw AppError.missingFields([field]);
  const facts = await services.untrusted.run<ImageFacts>('inspectImageTask', bytes).catch((error: unknown) => {
    // A busy pool, or an image too heavy to read in time, keeps its own answer; anything else is not an image.
    const code = findAppError(error)?.code;
    if (code === 'service_unavailable' || code === 'unprocessable_content') throw error;
    throw AppError.badRequest([{ field, problem: `a JPEG or PNG ${noun}` }]);
  });
  return { bytes, facts };
}
