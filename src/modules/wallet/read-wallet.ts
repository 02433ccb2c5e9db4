import type { EntityManager } from '@mikro-orm/postgresql';
import { checkPage, pageOf } from '../../platform/graphql/paging';
import { Wallet, WalletEntry } from './wallet.entity';

/**
 * By user id, not actor: the owner's reads pass their own, the admin reads (which check the admin scope first)
 * any user's.
 */
export async function walletBalance(em: EntityManager, userId: string): Promise<bigint> {
  const wallet = await em.findOne(Wallet, { user: userId });
  return wallet?.balancePaise ?? 0n;
}

/** The ledger, newest first: every credit, debit, charge and refund with the balance after it. */
export async function listLedger(
  em: EntityManager,
  userId: string,
  args: { page?: number | null; size?: number | null },
): Promise<{ items: WalletEntry[]; has_next: boolean }> {
  const { offset, limit } = checkPage(args);
  const rows = await em.find(
    WalletEntry,
    { user: userId },
    { orderBy: { createdAt: 'desc', seq: 'desc' }, offset, limit: limit + 1 },
  );
  return pageOf(rows, limit);
}
