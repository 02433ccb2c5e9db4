import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppServices } from '../../../platform/services';
import type { StampVendor, StampVendors, VendorAnswer, VendorStampRequest as StampRequest } from '../../stamps';

const VERIFICATION_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/**
 * What a simulated vendor issues for an idempotency key: derived from the key, so the same key gets the same stamp
 * (and the same refusal) in any process, as a real vendor keeps its answers. Sixteen random digits: collisions
 * stay below one in a million even at a hundred thousand stamps a day and state.
 */
function issuedFor(
  request: StampRequest,
  prefix: string,
): { certificateNumber: string; verificationCode: string; draws: number[] } {
  const digest = createHmac('sha256', 'esign-simulated-vendor').update(request.key).digest();
  const date = request.placedAt.toISOString().slice(2, 10).replace(/-/g, '');
  const number = String(digest.readBigUInt64BE(0) % 10_000_000_000_000_000n).padStart(16, '0');
  const verificationCode = Array.from(
    digest.subarray(8, 20),
    (byte) => VERIFICATION_ALPHABET[byte % VERIFICATION_ALPHABET.length],
  ).join('');
  return {
    certificateNumber: `${prefix}-${request.stateCode}${date}${number}`,
    verificationCode,
    draws: [20, 24, 28].map((offset) => digest.readUInt32BE(offset) / 2 ** 32),
  };
}

/** `mock: true` orders: always issues at once. */
export class MockVendor implements StampVendor {
  readonly name = 'mock';

  async procure(request: StampRequest): Promise<VendorAnswer> {
    const { certificateNumber, verificationCode } = issuedFor(request, 'MOCK');
    return { kind: 'issued', stamp: { certificateNumber, verificationCode, issuedAt: new Date() } };
  }
}

export interface SimulatedVendorOptions {
  /** Time each answer takes. */
  latencyMs: number;
  /** Share of keys refused for good. */
  rejectionRate: number;
  /** Share of keys answered `pending` at first; asked again after `pendingMs`, they are issued. */
  pendingRate?: number;
  pendingMs?: number;
  /**
   * Share of keys whose first ask (in this process) hangs for `hangMs`, longer than the job waits: the vendor
   * still issues the stamp, and the job's next ask gets it at once (a late answer).
   */
  hangRate?: number;
  hangMs?: number;
  /**
   * Share of keys answered with the certificate number of the order's first stamp: a vendor's mistake the job
   * must catch (a certificate number belongs to one stamp).
   */
  duplicateRate?: number;
}

/**
 * The sandbox stand-in for a stamp vendor: takes its time, turns some requests down, decides some later, hangs on
 * some, as real ones do. Every branch of the adapter interface can be reached with its options (tests, and
 * STAMP_VENDOR_* for sandbox integrators).
 */
export class SimulatedVendor implements StampVendor {
  readonly name = 'simulated';
  /** When each key was first asked in this process: pending and hanging answers depend on it. */
  private readonly firstAsked = new Map<string, number>();

  constructor(private readonly options: SimulatedVendorOptions) {}

  async procure(request: StampRequest, signal: AbortSignal): Promise<VendorAnswer> {
    const { certificateNumber, verificationCode, draws } = issuedFor(request, 'IN');
    const [rejectDraw, delayDraw, duplicateDraw] = draws;
    const firstAsk = !this.firstAsked.has(request.key);
    if (firstAsk) this.firstAsked.set(request.key, Date.now());
    const { pendingRate = 0, pendingMs = 1000, hangRate = 0, hangMs = 60_000 } = this.options;

    if (firstAsk && delayDraw < hangRate) {
      // Deaf to the signal, as a vendor that never answers is: the job stops waiting on its own.
      await sleep(hangMs);
    } else if (this.options.latencyMs > 0) {
      await sleep(this.options.latencyMs, undefined, { signal });
    }
    if (rejectDraw < this.options.rejectionRate) {
      return { kind: 'rejected', reason: 'vendor declined: stock of this denomination unavailable' };
    }
    const decidingLater = delayDraw >= hangRate && delayDraw < hangRate + pendingRate;
    const waited = Date.now() - this.firstAsked.get(request.key)!;
    if (decidingLater && waited < pendingMs) {
      return { kind: 'pending', retryAfterSeconds: Math.max(1, Math.ceil((pendingMs - waited) / 1000)) };
    }
    const duplicate = duplicateDraw < (this.options.duplicateRate ?? 0) && request.serial !== 1;
    return {
      kind: 'issued',
      stamp: {
        certificateNumber: duplicate
          ? issuedFor({ ...request, key: `${request.orderId}:1`, serial: 1 }, 'IN').certificateNumber
          : certificateNumber,
        verificationCode,
        issuedAt: new Date(),
      },
    };
  }
}

/** The vendors stamps procures from: the mock one for `mock: true` orders, the simulated one for the others. */
export function simulatedStampVendors(services: AppServices): StampVendors {
  const { vendorLatencyMs, vendorRejectionRate, vendorPendingRate, vendorHangRate } = services.config.stamps;
  return {
    mock: new MockVendor(),
    configured: new SimulatedVendor({
      latencyMs: vendorLatencyMs,
      rejectionRate: vendorRejectionRate,
      pendingRate: vendorPendingRate,
      hangRate: vendorHangRate,
      hangMs: services.config.stamps.vendorTimeoutMs * 2,
    }),
  };
}
