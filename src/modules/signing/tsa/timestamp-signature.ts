import type { AppConfig } from '../../../config';
import { AppError } from '../../../platform/errors';
import { addSignatureTimestamp } from './signature-timestamp';
import { TsaError, tsaStamper } from './tsa-client';

/**
 * Every signature the service makes or embeds goes through here before it enters the PDF: with a TSA configured
 * (always, but in production with ALLOW_SIGNING_WITHOUT_TIMESTAMP=true), it gets its signature time-stamp
 * (PAdES B-T). A TSA that does not answer with a valid token fails the signing step with `503
 * service_unavailable`, before anything is recorded: nothing is ever signed without its timestamp.
 */
export async function timestampSignature(tsa: AppConfig['tsa'], cms: Uint8Array): Promise<Uint8Array> {
  if (!tsa) return cms;
  return unavailableWithoutToken(() => addSignatureTimestamp(cms, tsaStamper(tsa)));
}

/** A time-stamp token over a SHA-256 digest (a document time-stamp), with the same failure as above. */
export function stampDigest(tsa: NonNullable<AppConfig['tsa']>, digest: Buffer): Promise<Buffer> {
  return unavailableWithoutToken(() => tsaStamper(tsa)(digest));
}

async function unavailableWithoutToken<T>(stamp: () => Promise<T>): Promise<T> {
  try {
    return await stamp();
  } catch (error) {
    if (!(error instanceof TsaError)) throw error;
    throw new AppError('service_unavailable', {
      message: `the time-stamping authority gave no valid timestamp (${error.message}); nothing was signed, try again`,
      cause: error,
    });
  }
}
