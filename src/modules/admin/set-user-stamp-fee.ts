import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { requireAdmin } from '../../platform/auth/require-admin';
import type { RequestOrigin } from '../../platform/auth/request-origin';
import { formatRupees } from '../../platform/money';
import type { AppServices } from '../../platform/services';
import { Problems } from '../../platform/validation/problems';
import { recordAccountAudit } from '../audit';
import { setStampFee } from '../users';
import { rupeesField, subjectUserId } from './admin-inputs';
import type { StampFeeType } from './admin.types';

/** The range of the ESTAMP_FEE_PER_STAMP setting: 0 to 9,999,999.99 rupees. */
const FEE = { min: 0n, max: 999_999_999n, wording: 'rupees from 0 to 9999999.99' };

export function stampFeeView(userId: string, ownPaise: bigint | null, defaultPaise: bigint): StampFeeType {
  return {
    user_id: userId,
    stamp_fee: formatRupees(ownPaise ?? defaultPaise),
    default_stamp_fee: formatRupees(defaultPaise),
    custom: ownPaise !== null,
  };
}

/**
 * Sets a user's own fee per stamp, or with `fee` null (or left out: REST cannot tell the two apart) returns them to
 * the configured default. Orders placed afterwards pay it; placed orders keep the fee they were charged. The change
 * and its audit row (with the fee before) commit together.
 */
export async function setUserStampFee(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  input: { user_id?: string | null; fee?: string | number | null },
  origin?: RequestOrigin,
): Promise<StampFeeType> {
  requireAdmin(actor);
  const problems = new Problems();
  const userId = subjectUserId(problems, input.user_id);
  const feePaise = rupeesField(problems, 'fee', input.fee, FEE) ?? null;
  const refused = problems.toError();
  if (refused) throw refused;

  const defaultPaise = services.config.stamps.feePerStampPaise;
  await em.transactional(async (tx) => {
    const { previousPaise } = await setStampFee(tx, userId!, feePaise);
    recordAccountAudit(tx, {
      subjectUserId: userId!,
      action: 'stamp_fee_set',
      actor,
      origin,
      details: {
        stamp_fee_before: previousPaise === null ? null : formatRupees(previousPaise),
        stamp_fee: feePaise === null ? null : formatRupees(feePaise),
        default_stamp_fee: formatRupees(defaultPaise),
      },
    });
  });
  return stampFeeView(userId!, feePaise, defaultPaise);
}
