import type { EntityManager } from '@mikro-orm/postgresql';
import { checkPage, pageOf } from '../../platform/graphql/paging';
import type { Actor } from '../../platform/auth/actor';
import { Wallet, WalletEntry } from './wallet.entity';

export async function walletBalance(em: EntityManager, actor: Actor): Promise<bigint> {
  const wallet = await em.findOne(Wallet, { user: actor.userId });
  return wallet?.balancePaise ?? 0n;
}

/** The ledger, newest first: every credit, charge and refund with the balance after it. */
export async function listLedger(
  em: EntityManager,
  actor: Actor,
  args: { page: number; size: number },
): Promise<{ items: WalletEntry[]; has_next: boolean }> {
  const { offset, limit } = checkPage(args);
  const rows = await em.find(
    WalletEntry,
    { user: actor.userId },
    { orderBy: { createdAt: 'desc', seq: 'desc' }, offset, limit: limit + 1 },
  );
  return pageOf(rows, limit);
}
