import { createHash } from 'node:crypto';
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { formatRupees } from '../../platform/money';
import type { AppServices } from '../../platform/services';
import { Problems, isAbsent, text } from '../../platform/validation/problems';
import type { Actor } from '../../platform/auth/actor';
import { User } from '../users';
import { applyLedgerChange } from '../wallet';
import { publishOrderChange } from './order-events';
import { enqueueProcurement } from './procure-stamps.job';
import { StampOrder } from './stamp-order.entity';
import { StampArticle, StampState } from './stamp-reference.entity';

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

const ORDER_FIELDS = [
  'state_code',
  'first_party_name',
  'second_party_name',
  'article_id',
  'stamp_duty_amount',
  'consideration_amount',
  'quantity',
  'description',
  'first_party_address',
  'mock',
] as const satisfies readonly (keyof CreateOrderInput)[];

/** What makes two create-order requests the same request, whatever their spacing or letter case. */
function requestFingerprint(input: CreateOrderInput): string {
  const normal = ORDER_FIELDS.map((key) => {
    const value = input[key];
    if (typeof value !== 'string') return value ?? null;
    return key === 'state_code' || key === 'article_id' ? value.trim().toUpperCase() : value.trim();
  });
  return createHash('sha256').update(JSON.stringify(normal)).digest('hex');
}

function sameRequestOrConflict(order: StampOrder, fingerprint: string): StampOrder {
  if (order.requestFingerprint && order.requestFingerprint !== fingerprint) {
    throw new AppError('conflict', {
      message: 'this Idempotency-Key was used with a different request',
      errors: [{ field: 'Idempotency-Key', problem: `already used for order ${order.id} with other values` }],
    });
  }
  return order;
}

/** Rupees as a number with at most 2 decimals, in paise; null for anything else. */
function rupeeNumberToPaise(value: number): bigint | null {
  if (!Number.isFinite(value) || value <= 0) return null;
  const paise = Math.round(value * 100);
  return Math.abs(paise - value * 100) < 1e-6 && paise <= Number.MAX_SAFE_INTEGER ? BigInt(paise) : null;
}

/**
 * Validates an order, then in one transaction: the order, its `quantity` pending instances and the
 * wallet charge (duty x quantity + fee x quantity; mock orders are free). Procurement starts after the
 * commit. With an idempotency key, a repeated request returns the first order and charges nothing.
 */
export async function createOrder(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  input: CreateOrderInput,
  idempotencyKey?: string,
): Promise<StampOrder> {
  if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > ORDER_LIMITS.idempotencyKey)) {
    throw AppError.badRequest([{ field: 'Idempotency-Key', problem: `1 to ${ORDER_LIMITS.idempotencyKey} characters` }]);
  }
  const fingerprint = requestFingerprint(input);
  if (idempotencyKey) {
    const earlier = await em.findOne(StampOrder, { user: actor.userId, idempotencyKey });
    if (earlier) return sameRequestOrConflict(earlier, fingerprint);
  }

  const problems = new Problems();
  const stateCode = text(problems, 'state_code', input.state_code, ORDER_LIMITS.stateCodeInput, true)?.toUpperCase();
  const firstParty = text(problems, 'first_party_name', input.first_party_name, ORDER_LIMITS.partyName, true);
  const secondParty = text(problems, 'second_party_name', input.second_party_name, ORDER_LIMITS.partyName, true);
  const articleId = text(problems, 'article_id', input.article_id, ORDER_LIMITS.articleId, true)?.toUpperCase();
  const description = text(problems, 'description', input.description, ORDER_LIMITS.description);
  const address = text(problems, 'first_party_address', input.first_party_address, ORDER_LIMITS.address);
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

  const state = await em.findOne(StampState, { code: stateCode! });
  if (!state)
    throw new AppError('invalid_state_code', {
      errors: [{ field: 'state_code', problem: 'not a supported state code (see /api/v1/stamps/states)' }],
    });
  const article = await em.findOne(StampArticle, { id: articleId!, state });
  if (!article) {
    throw new AppError('invalid_article_id', {
      errors: [
        {
          field: 'article_id',
          problem: `not an article of ${state.code} (see /api/v1/stamps/articles?state_code=${state.code})`,
        },
      ],
    });
  }

  const mock = input.mock ?? false;
  const dutyPaise = BigInt(duty!) * 100n;
  const feePaise = services.config.stamps.feePerStampPaise;
  const count = BigInt(quantity!);
  const chargedPaise = mock ? 0n : (dutyPaise + feePaise) * count;

  let order: StampOrder;
  try {
    order = await em.transactional(async (tx) => {
      const created = tx.create(StampOrder, {
        user: tx.getReference(User, actor.userId),
        stateCode: state.code,
        articleId: article.id,
        firstPartyName: firstParty!,
        secondPartyName: secondParty!,
        dutyPaise,
        considerationPaise: considerationPaise!,
        description,
        firstPartyAddress: address,
        quantity: quantity!,
        mock,
        feePaise,
        chargedPaise,
        idempotencyKey,
        requestFingerprint: idempotencyKey ? fingerprint : undefined,
      });
      await tx.flush();
      await tx.getConnection().execute(
        `insert into stamp_instances (id, order_id, user_id, state_code, article_id, duty_paise, serial, status)
         select 'stamp_inst_' || replace(gen_random_uuid()::text, '-', ''), ?, ?, ?, ?, ?, serial, 'pending'
           from generate_series(1, ?) as serial`,
        [created.id, actor.userId, state.code, article.id, dutyPaise.toString(), quantity!],
        'all',
        tx.getTransactionContext(),
      );
      if (chargedPaise > 0n) {
        await applyLedgerChange(tx, {
          userId: actor.userId,
          kind: 'charge',
          amountPaise: chargedPaise,
          reference: created.id,
          description: `e-stamp order ${created.id}: duty ${formatRupees(dutyPaise)} x ${quantity} + fee ${formatRupees(feePaise)} x ${quantity}`,
        });
      }
      await publishOrderChange(services, tx, { id: created.id, userId: actor.userId });
      return created;
    });
  } catch (error) {
    // The same key raced with itself: the first request won, this one answers with its order.
    if (idempotencyKey && error instanceof UniqueConstraintViolationException) {
      return sameRequestOrConflict(
        await em.fork().findOneOrFail(StampOrder, { user: actor.userId, idempotencyKey }),
        fingerprint,
      );
    }
    throw error;
  }
  await enqueueProcurement(services, order.id, quantity!);
  return order;
}
