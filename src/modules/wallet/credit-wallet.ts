import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { formatRupees } from '../../platform/money';
import { applyLedgerChange } from './ledger';

export interface LedgerResult {
  entry_id: string;
  user_id: string;
  amount: string;
  balance: string;
}

/** Adds money to a wallet: the balance and its ledger row change in one transaction. */
export async function creditWallet(
  em: EntityManager,
  userId: string,
  amountPaise: bigint,
  description = 'manual credit',
): Promise<LedgerResult> {
  if (amountPaise <= 0n) throw AppError.badRequest([{ field: 'amount', problem: 'must be greater than 0' }]);
  return em.transactional(async (tx) => {
    const users = await tx
      .getConnection()
      .execute<{ id: string }[]>('select id from users where id = ?', [userId], 'all', tx.getTransactionContext());
    if (users.length === 0) throw new AppError('not_found', { message: `no user ${userId}` });
    const { entryId, balancePaise } = await applyLedgerChange(tx, { userId, kind: 'credit', amountPaise, description });
    return { entry_id: entryId, user_id: userId, amount: formatRupees(amountPaise), balance: formatRupees(balancePaise) };
  });
}
