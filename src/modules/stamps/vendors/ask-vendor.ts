import type { AppServices } from '../../../platform/services';
import type { StampOrder } from '../stamp-order.entity';
import { stampVendors, type StampRequest, type StampVendor, type StampVendors, type VendorAnswer } from './vendor';

/** How the procurement job talks to a vendor: which one, what it asks, how long it waits, and when it asks again. */

/** Each process keeps one vendor per kind: the simulated vendor remembers what it was asked, as a real one does. */
const vendors = new WeakMap<AppServices, StampVendors>();

export function vendorFor(services: AppServices, order: StampOrder): StampVendor {
  let kinds = vendors.get(services);
  if (!kinds) {
    kinds = stampVendors.get()(services);
    vendors.set(services, kinds);
  }
  return order.mock ? kinds.mock : kinds.configured;
}

/** What the vendor is asked for one stamp of the order. */
export function stampRequestOf(order: StampOrder, serial: number): StampRequest {
  return {
    key: `${order.id}:${serial}`,
    orderId: order.id,
    serial,
    placedAt: order.createdAt,
    stateCode: order.stateCode,
    articleId: order.articleId,
    dutyPaise: order.dutyPaise,
    considerationPaise: order.considerationPaise,
    firstPartyName: order.firstPartyName,
    secondPartyName: order.secondPartyName,
    firstPartyAddress: order.firstPartyAddress ?? null,
    description: order.description ?? null,
  };
}

/**
 * Asks the vendor, waiting at most STAMP_VENDOR_TIMEOUT_MS: past it, or on an error, the answer is `unanswered`
 * and the instance is asked again later (the same key: a stamp issued meanwhile comes back, not a second one).
 */
export async function ask(
  services: AppServices,
  vendor: StampVendor,
  request: StampRequest,
): Promise<VendorAnswer | { kind: 'unanswered'; problem: string }> {
  const timeoutMs = services.config.stamps.vendorTimeoutMs;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<{ kind: 'unanswered'; problem: string }>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({ kind: 'unanswered', problem: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      vendor.procure(request, controller.signal).catch((error: unknown) => ({
        kind: 'unanswered' as const,
        problem: error instanceof Error ? error.message : String(error),
      })),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long an unanswered instance waits before its next ask: 5 s, doubling per attempt, at most 5 minutes. */
export function backoffSeconds(attempts: number): number {
  return Math.min(300, 5 * 2 ** Math.min(attempts, 6));
}
