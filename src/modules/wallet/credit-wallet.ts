import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { AppError } from '../../platform/errors';
import type { RequestOrigin } from '../../platform/auth/request-origin';
import { formatRupees } from '../../platform/money';
import type { AppServices } from '../../platform/services';
import { recordAccountAudit } from '../audit';
import { unknownUser } from '../users';
import { announcedLedgerChange, applyLedgerChange, signedAmount } from './ledger';

export interface LedgerResult {
  entry_id: string;
  user_id: string;
  amount: string;
  balance: string;
}

export interface WalletAdjustment {
  userId: string;
  kind: 'credit' | 'debit';
  /** Positive. */
  amountPaise: bigint;
  description: string;
  /** The admin token that asks; none for the operator's CLI. */
  actor?: Actor;
  origin?: RequestOrigin;
}

/**
 * A manual credit or debit of any user's wallet, in one transaction: the balance, its ledger row (with who did
 * it), the account's audit row and, when `services` are given (the API; the CLI runs no queue), the owner's
 * `wallet.credited` / `wallet.debited` webhook event. A debit the balance cannot cover is `402
 * insufficient_balance` and changes nothing. Who may call it is the caller's business (admin use cases, the CLI).
 */
export async function adjustWallet(
  em: EntityManager,
  adjustment: WalletAdjustment,
  services?: AppServices,
): Promise<{ entryId: string; balancePaise: bigint }> {
  const { userId, kind, amountPaise, description, actor, origin } = adjustment;
  if (amountPaise <= 0n) throw AppError.badRequest([{ field: 'amount', problem: 'must be greater than 0' }]);
  return em.transactional(async (tx) => {
    const users = await tx
      .getConnection()
      .execute<{ id: string }[]>('select id from users where id = ?', [userId], 'all', tx.getTransactionContext());
    if (users.length === 0) throw unknownUser(userId);
    const change = { userId, kind, amountPaise, description, actor };
    const applied = services ? await announcedLedgerChange(services, tx, change) : await applyLedgerChange(tx, change);
    recordAccountAudit(tx, {
      subjectUserId: userId,
      action: kind === 'credit' ? 'wallet_credited' : 'wallet_debited',
      actor,
      origin,
      details: {
        entry_id: applied.entryId,
        amount: formatRupees(signedAmount(kind, amountPaise)),
        balance_after: formatRupees(applied.balancePaise),
        description,
        ...(actor ? {} : { via: 'cli' }),
      },
    });
    return { entryId: applied.entryId, balancePaise: applied.balancePaise };
  });
}

/** The operator's credit (CLI `wallet credit`): an adjustment without an admin token. */
export async function creditWallet(
  em: EntityManager,
  userId: string,
  amountPaise: bigint,
  description = 'manual credit',
): Promise<LedgerResult> {
  const { entryId, balancePaise } = await adjustWallet(em, { userId, kind: 'credit', amountPaise, description });
  return { entry_id: entryId, user_id: userId, amount: formatRupees(amountPaise), balance: formatRupees(balancePaise) };
}
