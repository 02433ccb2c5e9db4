import { createHash } from 'node:crypto';
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { formatRupees } from '../../platform/money';
import type { AppServices } from '../../platform/services';
import type { Actor } from '../../platform/auth/actor';
import { stampFeeOf, User } from '../users';
import { chargeOrRefund } from '../wallet';
import { publishOrderChange, recordOrderCreated } from './order-events';
import { ORDER_LIMITS, planOrder, type CreateOrderInput, type OrderPlan } from './plan-order';
import { enqueueProcurement } from './procure-stamps.job';
import { StampOrder } from './stamp-order.entity';
import { StampArticle, StampState } from './stamp-reference.entity';

// Planning moved to plan-order.ts; the resolver still takes these from here.
export { ORDER_LIMITS, type CreateOrderInput } from './plan-order';

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

/** A checked Idempotency-Key, with the fingerprint of the request it came with. */
interface Idempotency {
  key: string;
  fingerprint: string;
}

function idempotencyOf(input: CreateOrderInput, idempotencyKey: string | undefined): Idempotency | undefined {
  if (idempotencyKey === undefined) return undefined;
  if (idempotencyKey.length === 0 || idempotencyKey.length > ORDER_LIMITS.idempotencyKey) {
    throw AppError.badRequest([{ field: 'Idempotency-Key', problem: `1 to ${ORDER_LIMITS.idempotencyKey} characters` }]);
  }
  return { key: idempotencyKey, fingerprint: requestFingerprint(input) };
}

/**
 * Places an order: plans it (every field checked), then creates it. With an idempotency key, a repeated
 * request returns the first order and charges nothing.
 */
export async function createOrder(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  input: CreateOrderInput,
  idempotencyKey?: string,
): Promise<StampOrder> {
  const idempotency = idempotencyOf(input, idempotencyKey);
  // A replay is answered before its fields are checked: a key reused with other values is a conflict, not a 400.
  if (idempotency) {
    const earlier = await em.findOne(StampOrder, { user: actor.userId, idempotencyKey: idempotency.key });
    if (earlier) return sameRequestOrConflict(earlier, idempotency.fingerprint);
  }
  return createPlannedOrder(services, em, actor, planOrder(input), idempotency);
}

/** The state and article the plan names, among the seeded reference data. */
async function findReferences(em: EntityManager, plan: OrderPlan): Promise<{ state: StampState; article: StampArticle }> {
  const state = await em.findOne(StampState, { code: plan.stateCode });
  if (!state)
    throw new AppError('invalid_state_code', {
      errors: [{ field: 'state_code', problem: 'not a supported state code (see /api/v1/stamps/states)' }],
    });
  const article = await em.findOne(StampArticle, { id: plan.articleId, state });
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
  return { state, article };
}

/**
 * Creates an order from a valid plan, in one transaction: the order, its `quantity` pending instances and the
 * wallet charge (duty x quantity + fee x quantity; mock orders are free). Procurement starts after the commit.
 */
async function createPlannedOrder(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  plan: OrderPlan,
  idempotency: Idempotency | undefined,
): Promise<StampOrder> {
  const { state, article } = await findReferences(em, plan);
  const { dutyPaise, quantity } = plan;
  const feePaise = await stampFeeOf(em, actor.userId, services.config.stamps.feePerStampPaise);
  const chargedPaise = plan.mock ? 0n : (dutyPaise + feePaise) * BigInt(quantity);

  let order: StampOrder;
  try {
    order = await em.transactional(async (tx) => {
      const created = tx.create(StampOrder, {
        user: tx.getReference(User, actor.userId),
        stateCode: state.code,
        articleId: article.id,
        firstPartyName: plan.firstPartyName,
        secondPartyName: plan.secondPartyName,
        dutyPaise,
        considerationPaise: plan.considerationPaise,
        description: plan.description,
        firstPartyAddress: plan.firstPartyAddress,
        quantity,
        mock: plan.mock,
        feePaise,
        chargedPaise,
        idempotencyKey: idempotency?.key,
        requestFingerprint: idempotency?.fingerprint,
      });
      await tx.flush();
      await tx.getConnection().execute(
        `insert into stamp_instances (id, order_id, user_id, state_code, article_id, duty_paise, serial, status)
         select 'stamp_inst_' || replace(gen_random_uuid()::text, '-', ''), ?, ?, ?, ?, ?, serial, 'pending'
           from generate_series(1, ?) as serial`,
        [created.id, actor.userId, state.code, article.id, dutyPaise.toString(), quantity],
        'all',
        tx.getTransactionContext(),
      );
      if (chargedPaise > 0n) {
        await chargeOrRefund(services, tx, {
          userId: actor.userId,
          kind: 'charge',
          amountPaise: chargedPaise,
          reference: created.id,
          description: `e-stamp order ${created.id}: duty ${formatRupees(dutyPaise)} x ${quantity} + fee ${formatRupees(feePaise)} x ${quantity}`,
        });
      }
      await publishOrderChange(services, tx, { id: created.id, userId: actor.userId });
      await recordOrderCreated(services, tx, { id: created.id, userId: actor.userId });
      // Its procurement jobs commit with the order (and its charge): an order never waits for the sweep.
      await enqueueProcurement(services, tx, created.id, quantity);
      return created;
    });
  } catch (error) {
    // The same key raced with itself: the first request won, this one answers with its order.
    if (idempotency && error instanceof UniqueConstraintViolationException) {
      return sameRequestOrConflict(
        await em.fork().findOneOrFail(StampOrder, { user: actor.userId, idempotencyKey: idempotency.key }),
        idempotency.fingerprint,
      );
    }
    throw error;
  }
  return order;
}
