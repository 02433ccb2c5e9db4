import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StampOrder } from '../stamp-order.entity';
import type { ProcurementOutcome, StampVendor } from './vendor';

const VERIFICATION_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/**
 * What a simulated vendor issues for an idempotency key: derived from the key, so the same key gets the same stamp
 * (and the same refusal) in any process, as a real vendor keeps its answers.
 */
function issuedFor(
  order: StampOrder,
  serial: number,
  prefix: string,
): { certificateNumber: string; verificationCode: string; draw: number } {
  const digest = createHmac('sha256', 'esign-simulated-vendor').update(`${order.id}:${serial}`).digest();
  const date = order.createdAt.toISOString().slice(2, 10).replace(/-/g, '');
  const number = String(digest.readBigUInt64BE(0) % 10_000_000_000n).padStart(10, '0');
  const verificationCode = Array.from(
    digest.subarray(8, 20),
    (byte) => VERIFICATION_ALPHABET[byte % VERIFICATION_ALPHABET.length],
  ).join('');
  return {
    certificateNumber: `${prefix}-${order.stateCode}${date}${number}`,
    verificationCode,
    draw: digest.readUInt32BE(20) / 2 ** 32,
  };
}

/** `mock: true` orders: always succeeds at once. */
export class MockVendor implements StampVendor {
  readonly name = 'mock';

  async procure(order: StampOrder, serial: number): Promise<ProcurementOutcome> {
    const { certificateNumber, verificationCode } = issuedFor(order, serial, 'MOCK');
    return { ok: true, stamp: { certificateNumber, verificationCode, issuedAt: new Date() } };
  }
}

/** The sandbox stand-in for a stamp vendor: takes its time and turns some requests down, as real ones do. */
export class SimulatedVendor implements StampVendor {
  readonly name = 'simulated';

  constructor(private readonly options: { latencyMs: number; rejectionRate: number }) {}

  async procure(order: StampOrder, serial: number): Promise<ProcurementOutcome> {
    if (this.options.latencyMs > 0) await sleep(this.options.latencyMs);
    const { certificateNumber, verificationCode, draw } = issuedFor(order, serial, 'IN');
    if (draw < this.options.rejectionRate) {
      return { ok: false, reason: 'vendor declined: stock of this denomination unavailable' };
    }
    return { ok: true, stamp: { certificateNumber, verificationCode, issuedAt: new Date() } };
  }
}
