import type { StampOrder } from '../stamp-order.entity';

export interface ProcuredStamp {
  certificateNumber: string;
  verificationCode: string;
  issuedAt: Date;
}

export type ProcurementOutcome = { ok: true; stamp: ProcuredStamp } | { ok: false; reason: string };

/**
 * Where stamps come from. Each call procures one stamp; a vendor may refuse one (the instance is then refunded).
 * `(order.id, serial)` is the request's idempotency key: asked again for the same key (a worker died before it
 * recorded the answer, a lease moved), a vendor answers with the stamp it issued for that key, never a second one.
 */
export interface StampVendor {
  readonly name: string;
  procure(order: StampOrder, serial: number): Promise<ProcurementOutcome>;
}
