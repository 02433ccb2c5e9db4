import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { AppError } from '../../platform/errors';
import { newId } from '../../platform/ids';
import { formatRupees } from '../../platform/money';
import type { AppServices } from '../../platform/services';
import { recordWebhookEvent, type WebhookEventType } from '../webhooks';
import type { WalletEntryKind } from './wallet.entity';

export interface LedgerChange {
  userId: string;
  kind: WalletEntryKind;
  /** Positive; the kind decides the direction (a charge or a debit takes it away). */
  amountPaise: bigint;
  description: string;
  reference?: string;
  /** The admin token that made a manual entry; kept on the row as who did it. */
  actor?: Actor;
}

/** The kinds that take money away: each one UPDATE conditional on the balance (see applyLedgerChange). */
const OUTGOING: ReadonlySet<WalletEntryKind> = new Set(['charge', 'debit']);

/** The signed amount a ledger row shows. */
export function signedAmount(kind: WalletEntryKind, amountPaise: bigint): bigint {
  return OUTGOING.has(kind) ? -amountPaise : amountPaise;
}

/**
 * Moves money and writes its ledger row, inside the caller's transaction. A charge or a debit is one conditional
 * UPDATE (balance >= amount), so concurrent ones can never take a wallet below zero: the loser finds no row to
 * update and gets `402 insufficient_balance`. The table's CHECK constraint backs this up.
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
  if (OUTGOING.has(change.kind)) {
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
  const [entry] = await conn.execute<{ created_at: Date }[]>(
    `insert into wallet_entries
       (id, user_id, kind, amount_paise, balance_after_paise, description, reference, actor_user_id, actor_token_id)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?) returning created_at`,
    [
      entryId,
      change.userId,
      change.kind,
      signedAmount(change.kind, change.amountPaise).toString(),
      balancePaise.toString(),
      change.description,
      change.reference ?? null,
      change.actor?.userId ?? null,
      change.actor?.tokenId ?? null,
    ],
    'all',
    ctx,
  );
  return { entryId, balancePaise, createdAt: new Date(entry.created_at) };
}

const EVENT_OF: Record<WalletEntryKind, WebhookEventType> = {
  credit: 'wallet.credited',
  debit: 'wallet.debited',
  charge: 'wallet.charged',
  refund: 'wallet.refunded',
};

/**
 * A ledger change (applyLedgerChange) announced to the owner's webhooks (`wallet.charged`, `wallet.refunded`,
 * `wallet.credited`, `wallet.debited`) with the ledger entry as GET wallet/ledger lists it.
 */
export async function announcedLedgerChange(
  services: AppServices,
  tx: EntityManager,
  change: LedgerChange,
): Promise<{ entryId: string; balancePaise: bigint; createdAt: Date }> {
  const applied = await applyLedgerChange(tx, change);
  await recordWebhookEvent(services, tx, {
    userId: change.userId,
    type: EVENT_OF[change.kind],
    resourceId: applied.entryId,
    data: {
      entry_id: applied.entryId,
      kind: change.kind,
      amount: formatRupees(signedAmount(change.kind, change.amountPaise)),
      balance_after: formatRupees(applied.balancePaise),
      description: change.description,
      reference: change.reference ?? null,
      performed_by: change.actor?.userId ?? null,
      created_at: applied.createdAt.toISOString(),
    },
  });
  return applied;
}

/** The service's own movements: an order's charge, a rejected stamp's refund. */
export function chargeOrRefund(
  services: AppServices,
  tx: EntityManager,
  change: Omit<LedgerChange, 'actor'> & { kind: 'charge' | 'refund' },
): Promise<{ entryId: string; balancePaise: bigint }> {
  return announcedLedgerChange(services, tx, change);
}
