import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import type { RequestOrigin } from '../audit';
import { handOverSigner, lockSigner, signerByToken } from '../esign/signer-side';

/**
 * A signer hands their place to someone else, when the session allows it (`allow_delegation`): the same hand-over
 * as the owner's reassign-signer. The delegating signer's own link stops working at once.
 */
export async function delegateAsSigner(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { full_name?: unknown; email?: unknown; mobile?: unknown; country_code?: unknown },
  origin: RequestOrigin,
): Promise<{ delegated_to: string }> {
  const found = await signerByToken(em, token);
  const asText = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return em.transactional(async (tx) => {
    const { session, signer } = await lockSigner(tx, found);
    if (!session.allowDelegation) {
      throw new AppError('conflict', { message: 'this session does not allow delegation' });
    }
    if (typeof input.full_name !== 'string' || !input.full_name.trim()) {
      throw AppError.missingFields(['full_name']);
    }
    await handOverSigner(services, tx, {
      session,
      signer,
      contact: {
        full_name: asText(input.full_name),
        email: asText(input.email),
        mobile: asText(input.mobile),
        country_code: asText(input.country_code),
      },
      event: 'signer_delegated',
      by: signer.id,
      origin,
    });
    return { delegated_to: signer.fullName };
  });
}
