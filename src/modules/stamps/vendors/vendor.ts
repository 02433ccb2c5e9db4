/**
 * The stamp vendor adapter: what the procurement job asks of whoever issues e-stamp certificates (a stamp
 * authority's intermediary such as SHCIL, or a reseller's API). docs/stamps.md describes it for an integrator
 * writing a real adapter.
 */
import { Slot } from '../../../platform/module';
import type { AppServices } from '../../../platform/services';

/** One stamp asked of the vendor: everything a certificate carries, under an idempotency key. */
export interface StampRequest {
  /**
   * `<order id>:<serial>`. The vendor keeps its answer per key: asked again (a retry after a timeout, a worker that
   * died before recording, a lease that moved to another worker), it answers with what it decided the first time,
   * never a second stamp.
   */
  key: string;
  orderId: string;
  serial: number;
  /** When the order was placed (the vendor's stamp date may differ). */
  placedAt: Date;
  stateCode: string;
  articleId: string;
  dutyPaise: bigint;
  considerationPaise: bigint;
  firstPartyName: string;
  secondPartyName: string;
  firstPartyAddress: string | null;
  description: string | null;
}

export interface ProcuredStamp {
  certificateNumber: string;
  verificationCode: string;
  issuedAt: Date;
}

/**
 * A vendor's answer for one key:
 * - `issued`: the certificate exists; the job renders and records it (`available`).
 * - `rejected`: final; the instance is `rejected` and its duty and fee refunded.
 * - `pending`: accepted, not decided yet; the job asks again with the same key after `retryAfterSeconds` (the
 *   instance stays `pending`, leased to nobody until then).
 * A thrown error or no answer within STAMP_VENDOR_TIMEOUT_MS is neither: the job asks again later, with backoff.
 */
export type VendorAnswer =
  | { kind: 'issued'; stamp: ProcuredStamp }
  | { kind: 'rejected'; reason: string }
  | { kind: 'pending'; retryAfterSeconds: number };

export interface StampVendor {
  readonly name: string;
  /**
   * Places the request, or asks about one placed before (same key). `signal` aborts when the job stops waiting;
   * an adapter passes it to its HTTP client. Polling a pending request is this same call.
   */
  procure(request: StampRequest, signal: AbortSignal): Promise<VendorAnswer>;
}

/** The vendors a process procures from: `mock` for `mock: true` orders, `configured` (STAMP_VENDOR) for the others. */
export interface StampVendors {
  mock: StampVendor;
  configured: StampVendor;
}

/**
 * Made once per process from its settings. The sandbox module fills it (its mock and simulated vendors, the only
 * ones so far; a real vendor's adapter would too): stamps never imports them, the composition hands them in.
 */
export const stampVendors = new Slot<(services: AppServices) => StampVendors>("stamps' vendors");
