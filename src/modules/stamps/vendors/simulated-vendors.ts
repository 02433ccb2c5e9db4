import { randomBytes, randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StampOrder } from '../stamp-order.entity';
import type { ProcurementOutcome, StampVendor } from './vendor';

const VERIFICATION_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

function verificationCode(): string {
  return Array.from(randomBytes(12), (byte) => VERIFICATION_ALPHABET[byte % VERIFICATION_ALPHABET.length]).join('');
}

/** The shape real e-stamp certificate numbers take: IN-<state><date><serial>. */
function certificateNumber(order: StampOrder, prefix: string): string {
  const date = new Date().toISOString().slice(2, 10).replace(/-/g, '');
  return `${prefix}-${order.stateCode}${date}${String(randomInt(0, 1e10)).padStart(10, '0')}`;
}

/** `mock: true` orders: always succeeds at once. */
export class MockVendor implements StampVendor {
  readonly name = 'mock';

  async procure(order: StampOrder): Promise<ProcurementOutcome> {
    return {
      ok: true,
      stamp: { certificateNumber: certificateNumber(order, 'MOCK'), verificationCode: verificationCode(), issuedAt: new Date() },
    };
  }
}

/** The sandbox stand-in for a stamp vendor: takes its time and turns some requests down, as real ones do. */
export class SimulatedVendor implements StampVendor {
  readonly name = 'simulated';

  constructor(private readonly options: { latencyMs: number; rejectionRate: number }) {}

  async procure(order: StampOrder): Promise<ProcurementOutcome> {
    if (this.options.latencyMs > 0) await sleep(this.options.latencyMs);
    if (Math.random() < this.options.rejectionRate) {
      return { ok: false, reason: 'vendor declined: stock of this denomination unavailable' };
    }
    return {
      ok: true,
      stamp: { certificateNumber: certificateNumber(order, 'IN'), verificationCode: verificationCode(), issuedAt: new Date() },
    };
  }
}
