import { Problems, isAbsent, text } from '../../platform/validation/problems';

export const ORDER_LIMITS = {
  /** Only a bound on the input: any value that is not a seeded code is `invalid_state_code`, as in the reads. */
  stateCodeInput: 100,
  partyName: 200,
  articleId: 100,
  duty: { min: 1, max: 1_000_000 },
  quantity: { min: 1, max: 5000 },
  description: 500,
  address: 500,
  idempotencyKey: 200,
} as const;

export interface CreateOrderInput {
  state_code?: string | null;
  first_party_name?: string | null;
  second_party_name?: string | null;
  article_id?: string | null;
  stamp_duty_amount?: number | null;
  consideration_amount?: number | null;
  quantity?: number | null;
  description?: string | null;
  first_party_address?: string | null;
  mock?: boolean | null;
}

/**
 * An order whose fields are all valid. The state and article are codes still to be found among the
 * reference data: that needs the database, so creation does it and this stays pure.
 */
export interface OrderPlan {
  /** Upper-cased, as the reference data stores it. */
  stateCode: string;
  /** Upper-cased, as the reference data stores it. */
  articleId: string;
  firstPartyName: string;
  secondPartyName: string;
  dutyPaise: bigint;
  considerationPaise: bigint;
  description?: string;
  firstPartyAddress?: string;
  quantity: number;
  mock: boolean;
}

/** Rupees as a number with at most 2 decimals, in paise; null for anything else. */
function rupeeNumberToPaise(value: number): bigint | null {
  if (!Number.isFinite(value) || value <= 0) return null;
  const paise = Math.round(value * 100);
  return Math.abs(paise - value * 100) < 1e-6 && paise <= Number.MAX_SAFE_INTEGER ? BigInt(paise) : null;
}

/**
 * Checks every field of an order and answers all their problems at once (missing_fields before
 * bad_request, `errors` in field order), or returns the plan creation writes.
 */
export function planOrder(input: CreateOrderInput): OrderPlan {
  const problems = new Problems();
  const stateCode = text(problems, 'state_code', input.state_code, ORDER_LIMITS.stateCodeInput, true)?.toUpperCase();
  const firstParty = text(problems, 'first_party_name', input.first_party_name, ORDER_LIMITS.partyName, true);
  const secondParty = text(problems, 'second_party_name', input.second_party_name, ORDER_LIMITS.partyName, true);
  const articleId = text(problems, 'article_id', input.article_id, ORDER_LIMITS.articleId, true)?.toUpperCase();
  const description = text(problems, 'description', input.description, ORDER_LIMITS.description);
  const address = text(problems, 'first_party_address', input.first_party_address, ORDER_LIMITS.address);
  // A blank address is refused, not read as none: leaving it out is saying null.
  if (input.first_party_address != null && address === undefined) {
    problems.invalidField('first_party_address', `1 to ${ORDER_LIMITS.address} characters when given`);
  }
  const duty = input.stamp_duty_amount;
  if (isAbsent(duty)) problems.missingField('stamp_duty_amount');
  else if (!Number.isInteger(duty) || duty! < ORDER_LIMITS.duty.min || duty! > ORDER_LIMITS.duty.max) {
    problems.invalidField('stamp_duty_amount', 'a whole number of rupees from 1 to 1,000,000 (fractions are refused)');
  }
  const consideration = input.consideration_amount;
  let considerationPaise: bigint | null = null;
  if (isAbsent(consideration)) problems.missingField('consideration_amount');
  else if ((considerationPaise = rupeeNumberToPaise(consideration!)) === null) {
    problems.invalidField('consideration_amount', 'greater than 0, in rupees with at most 2 decimals');
  }
  const quantity = input.quantity;
  if (isAbsent(quantity)) problems.missingField('quantity');
  else if (!Number.isInteger(quantity) || quantity! < ORDER_LIMITS.quantity.min || quantity! > ORDER_LIMITS.quantity.max) {
    problems.invalidField('quantity', 'a whole number from 1 to 5000');
  }
  const invalid = problems.toError();
  if (invalid) throw invalid;

  return {
    stateCode: stateCode!,
    articleId: articleId!,
    firstPartyName: firstParty!,
    secondPartyName: secondParty!,
    dutyPaise: BigInt(duty!) * 100n,
    considerationPaise: considerationPaise!,
    description,
    firstPartyAddress: address,
    quantity: quantity!,
    mock: input.mock ?? false,
  };
}
