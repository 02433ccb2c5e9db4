import type { StampStatus } from './stamp-order.entity';

/** An order's overall status, from its instances' (docs/reference.md, 6.1). */
export type OrderStatus = 'pending' | 'processing' | 'completed' | 'partially_failed' | 'failed';
export const ORDER_STATUSES: readonly OrderStatus[] = ['pending', 'processing', 'completed', 'partially_failed', 'failed'];

/**
 * `pending`: no stamp settled yet; `processing`: some settled, some still pending; once none is pending:
 * `completed` (every stamp issued), `partially_failed` (some refused) or `failed` (every stamp refused). Issued
 * stamps count as issued whatever sessions did with them since (available, reserved or used).
 */
export function orderStatusOf(counts: Record<StampStatus, number>): OrderStatus {
  const total = counts.pending + counts.available + counts.reserved + counts.used + counts.rejected;
  if (counts.pending === total) return 'pending';
  if (counts.pending > 0) return 'processing';
  if (counts.rejected === 0) return 'completed';
  return counts.rejected === total ? 'failed' : 'partially_failed';
}

/**
 * What the order costs the wallet now: the charge less the refunds of refused stamps. Each refusal refunds duty +
 * fee of one stamp in the transaction that rejects it, and only then (docs/stamps.md), so the count of rejected
 * instances gives the refunds exactly; mock orders are charged nothing and refunded nothing.
 */
export function netChargedPaise(
  order: { charged_paise: bigint; refund_per_stamp_paise: bigint },
  counts: Record<StampStatus, number>,
): bigint {
  if (order.charged_paise === 0n) return 0n;
  return order.charged_paise - BigInt(counts.rejected) * order.refund_per_stamp_paise;
}
