import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { newId } from '../../platform/ids';
import { formatRupees } from '../../platform/money';

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
    const conn = tx.getConnection();
    const users = await conn.execute<{ id: string }[]>('select id from users where id = ?', [userId]);
    if (users.length === 0) throw new AppError('not_found', { message: `no user ${userId}` });
    const [wallet] = await conn.execute<{ balance_paise: string }[]>(
      `insert into wallets (user_id, balance_paise) values (?, ?)
       on conflict (user_id) do update set balance_paise = wallets.balance_paise + excluded.balance_paise, updated_at = now()
       returning balance_paise`,
      [userId, amountPaise.toString()],
    );
    const entryId = newId('wle');
    await conn.execute(
      `insert into wallet_entries (id, user_id, kind, amount_paise, balance_after_paise, description)
       values (?, ?, 'credit', ?, ?, ?)`,
      [entryId, userId, amountPaise.toString(), wallet.balance_paise, description],
    );
    return {
      entry_id: entryId,
      user_id: userId,
      amount: formatRupees(amountPaise),
      balance: formatRupees(BigInt(wallet.balance_paise)),
    };
  });
}
