import type { EntityManager } from '@mikro-orm/postgresql';
import { unknownUser } from './unknown-user';

/** The fee per stamp a user's orders pay: their own when an admin set one, else `defaultPaise` (configuration). */
export async function stampFeeOf(em: EntityManager, userId: string, defaultPaise: bigint): Promise<bigint> {
  const [row] = await em
    .getConnection()
    .execute<{ stamp_fee_paise: string | null }[]>(
      'select stamp_fee_paise from users where id = ?',
      [userId],
      'all',
      em.getTransactionContext(),
    );
  return row?.stamp_fee_paise == null ? defaultPaise : BigInt(row.stamp_fee_paise);
}

/**
 * Sets (or with null, clears) a user's own fee per stamp, in the caller's transaction; answers the fee before,
 * null when it was the default. The row is locked, so two admins setting it at once record a true "before" each.
 */
export async function setStampFee(
  tx: EntityManager,
  userId: string,
  feePaise: bigint | null,
): Promise<{ previousPaise: bigint | null }> {
  const [before] = await tx
    .getConnection()
    .execute<{ stamp_fee_paise: string | null }[]>(
      'select stamp_fee_paise from users where id = ? for update',
      [userId],
      'all',
      tx.getTransactionContext(),
    );
  if (!before) throw unknownUser(userId);
  await tx
    .getConnection()
    .execute(
      'update users set stamp_fee_paise = ? where id = ?',
      [feePaise?.toString() ?? null, userId],
      'all',
      tx.getTransactionContext(),
    );
  return { previousPaise: before.stamp_fee_paise == null ? null : BigInt(before.stamp_fee_paise) };
}
