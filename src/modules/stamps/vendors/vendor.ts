import type { StampOrder } from '../stamp-order.entity';

export interface ProcuredStamp {
  certificateNumber: string;
  verificationCode: string;
  issuedAt: Date;
}

export type ProcurementOutcome = { ok: true; stamp: ProcuredStamp } | { ok: false; reason: string };

/** Where stamps come from. Each call procures one stamp; a vendor may refuse one (the instance is then refunded). */
export interface StampVendor {
  readonly name: string;
  procure(order: StampOrder, serial: number): Promise<ProcurementOutcome>;
}
