import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { requireAdmin } from '../../platform/auth/require-admin';
import type { RequestOrigin } from '../../platform/auth/request-origin';
import { formatRupees } from '../../platform/money';
import type { AppServices } from '../../platform/services';
import { Problems, text } from '../../platform/validation/problems';
import { adjustWallet, toWalletEntryView, WalletEntry } from '../wallet';
import { rupeesField, subjectUserId } from './admin-inputs';
import type { AdminWalletChangeType } from './admin.types';

export interface AdjustWalletInput {
  user_id?: string | null;
  amount?: string | number | null;
  description?: string | null;
}

/** parseRupees's own bound (13 digits of rupees); a balance stays far inside PostgreSQL's bigint. */
const AMOUNT = { min: 1n, max: 999_999_999_999_999n, wording: 'rupees greater than 0' };
const DESCRIPTION_LENGTH = 500;

/**
 * An admin's credit or debit of any user's wallet. The ledger row, the account audit row (both naming the admin's
 * user and token) and the owner's webhook event commit together; a debit beyond the balance is `402
 * insufficient_balance` and changes nothing, however many race (the ledger's conditional update).
 */
export async function adjustAnyWallet(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  kind: 'credit' | 'debit',
  input: AdjustWalletInput,
  origin?: RequestOrigin,
): Promise<AdminWalletChangeType> {
  requireAdmin(actor);
  const problems = new Problems();
  const userId = subjectUserId(problems, input.user_id);
  const amountPaise = rupeesField(problems, 'amount', input.amount, AMOUNT, true);
  const description = text(problems, 'description', input.description, DESCRIPTION_LENGTH, true);
  const refused = problems.toError();
  if (refused) throw refused;

  const { entryId, balancePaise } = await adjustWallet(
    em,
    { userId: userId!, kind, amountPaise: amountPaise!, description: description!, actor, origin },
    services,
  );
  return {
    user_id: userId!,
    balance: formatRupees(balancePaise),
    currency: 'INR',
    entry: toWalletEntryView(await em.findOneOrFail(WalletEntry, entryId)),
  };
}
