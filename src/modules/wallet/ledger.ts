import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { newId } from '../../platform/ids';
import { formatRupees } from '../../platform/money';
import type { AppServices } from '../../platform/services';
import { recordWebhookEvent } from '../webhooks';
import type { WalletEntryKind } from './wallet.entity';

export interface LedgerChange {
  userId: string;
  kind: WalletEntryKind;
  /** Positive; the kind decides the direction (a charge takes it away). */
  amountPaise: bigint;
  description: string;
  reference?: string;
}

/**
 * Moves money and writes its ledger row, inside the caller's transaction. A charge is one conditional
 * UPDATE (balance >= amount), so concurrent charges can never take a wallet below zero: the loser finds
 * no row to update and gets `402 insufficient_balance`. The table's CHECK constraint backs this up.
 */
export async function applyLedgerChange(
  tx: EntityManager,
  change: LedgerChange,
): Promise<{ entryId: string; balancePaise: bigint; createdAt: Date }> {
  if (change.amountPaise <= 0n) throw new Error('ledger amounts are positive');
  const conn = tx.getConnection();
  const ctx = tx.getTransactionContext();
  const amount = change.amountPaise.toString();
  let rows: { balance_paise: string }[];
  if (change.kind === 'charge') {
    rows = await conn.execute(
      `update wallets set balance_paise = balance_paise - ?, updated_at = now()
        where user_id = ? and balance_paise >= ? returning balance_paise`,
      [amount, change.userId, amount],
      'all',
      ctx,
    );
    if (rows.length === 0) {
      const [wallet] = await conn.execute<{ balance_paise: string }[]>(
        'select balance_paise from wallets where user_id = ?',
        [change.userId],
        'all',
        ctx,
      );
      throw new AppError('insufficient_balance', {
        message: 'insufficient_balance',
        errors: [
          {
            field: 'wallet',
            problem: `needs ${formatRupees(change.amountPaise)}, balance is ${formatRupees(BigInt(wallet?.balance_paise ?? 0))}`,
          },
        ],
      });
    }
  } else {
    rows = await conn.execute(
      `insert into wallets (user_id, balance_paise) values (?, ?)
       on conflict (user_id) do update set balance_paise = wallets.balance_paise + excluded.balance_paise, updated_at = now()
       returning balance_paise`,
      [change.userId, amount],
      'all',
      ctx,
    );
  }
  const balancePaise = BigInt(rows[0].balance_paise);
  const entryId = newId('wle');
  const signed = change.kind === 'charge' ? -change.amountPaise : change.amountPaise;
  const [entry] = await conn.execute<{ created_at: Date }[]>(
    `insert into wallet_entries (id, user_id, kind, amount_paise, balance_after_paise, description, reference)
     values (?, ?, ?, ?, ?, ?, ?) returning created_at`,
    [
      entryId,
      change.userId,
      change.kind,
      signed.toString(),
      balancePaise.toString(),
      change.description,
      change.reference ?? null,
    ],
    'all',
    ctx,
  );
  return { entryId, balancePaise, createdAt: new Date(entry.created_at) };
}

/**
 * A charge or a refund (applyLedgerChange), announced to the owner's webhooks (`wallet.charged`,
 * `wallet.refunded`) with the ledger entry as GET wallet/ledger lists it.
 */
export async function chargeOrRefund(
  services: AppServices,
  tx: EntityManager,
  change: LedgerChange & { kind: 'charge' | 'refund' },
): Promise<{ entryId: string; balancePaise: bigint }> {
  const applied = await applyLedgerChange(tx, change);
  await recordWebhookEvent(services, tx, {
    userId: change.userId,
    type: change.kind === 'charge' ? 'wallet.charged' : 'wallet.refunded',
    resourceId: applied.entryId,
    data: {
      entry_id: applied.entryId,
      kind: change.kind,
      amount: formatRupees(change.kind === 'charge' ? -change.amountPaise : change.amountPaise),
      balance_after: formatRupees(applied.balancePaise),
      description: change.description,
      reference: change.reference ?? null,
      created_at: applied.createdAt.toISOString(),
    },
  });
  return applied;
}
