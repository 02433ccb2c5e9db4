import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import type { RequestOrigin } from '../audit';
import { lockSigner, recordDecline, signerByToken } from '../esign/signer-side';

export const DECLINE_REASON_MAX = 500;

/**
 * A signer declines, with a reason (required, at most 500 characters), whether or not it is their turn. The
 * session row is locked: a decline racing a signature either ends the session first (the signature then answers
 * `409`) or comes second and answers `409` itself.
 */
export async function declineAsSigner(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { reason?: unknown },
  origin: RequestOrigin,
): Promise<void> {
  const found = await signerByToken(em, token);
  const reason = typeof input.reason === 'string' ? input.reason.trim() : '';
  if (!reason) throw AppError.badRequest([{ field: 'reason', problem: 'required: say why you decline to sign' }]);
  if (reason.length > DECLINE_REASON_MAX) {
    throw AppError.badRequest([{ field: 'reason', problem: `at most ${DECLINE_REASON_MAX} characters` }]);
  }
  await em.transactional(async (tx) => {
    const { session, signer } = await lockSigner(tx, found);
    await recordDecline(services, tx, { session, signer, reason, origin });
  });
}
