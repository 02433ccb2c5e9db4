import { parseRupees } from '../../platform/money';
import { isAbsent, type Problems } from '../../platform/validation/problems';

export const MAX_EXPLICIT_STAMPS = 100;

/** A session's `stamp` object as the contract describes it (the esign module's input type has this shape). */
export interface StampRequest {
  amount?: string | null;
  state_code?: string | null;
  article_id?: string | null;
  first_party_name?: string | null;
  second_party_name?: string | null;
  stamp_instance_ids?: string[] | null;
  /** true: mock stamps only; absent or false: real (procured) stamps only. A session never mixes the two. */
  mock?: boolean | null;
}

/** A session's stamp request, checked for shape; availability is decided when reserving. */
export type StampPlan =
  | {
      kind: 'amount';
      amountPaise: bigint;
      stateCode: string;
      articleId: string;
      firstPartyName?: string;
      secondPartyName?: string;
      mock: boolean;
    }
  | { kind: 'explicit'; instanceIds: string[]; mock: boolean };

/**
 * Either the amount flow (`amount` as a decimal string of rupees, `state_code`, `article_id`, optionally the
 * parties) or the explicit flow (`stamp_instance_ids`), never both.
 */
export function planStamp(problems: Problems, input: StampRequest | null | undefined): StampPlan | null {
  if (!input) return null;
  const mock = input.mock === true;
  const ids = input.stamp_instance_ids;
  const amountFlow = ['amount', 'state_code', 'article_id', 'first_party_name', 'second_party_name'].some(
    (key) => !isAbsent(input[key as keyof StampRequest]),
  );
  if (ids != null && amountFlow) {
    problems.invalidField('stamp', 'use either the amount flow (amount, state_code, article_id) or stamp_instance_ids, not both');
    return null;
  }
  if (ids != null) {
    const unique = [...new Set(ids.map((id) => id.trim()))];
    if (unique.length === 0) problems.missingField('stamp.stamp_instance_ids');
    else if (unique.length !== ids.length) problems.invalidField('stamp.stamp_instance_ids', 'lists an instance more than once');
    else if (unique.length > MAX_EXPLICIT_STAMPS)
      problems.invalidField('stamp.stamp_instance_ids', `at most ${MAX_EXPLICIT_STAMPS} stamps`);
    else if (unique.some((id) => !id.startsWith('stamp_inst_')))
      problems.invalidField('stamp.stamp_instance_ids', 'must be stamp_inst_... identifiers');
    else return { kind: 'explicit', instanceIds: unique, mock };
    return null;
  }
  for (const key of ['amount', 'state_code', 'article_id'] as const)
    if (isAbsent(input[key])) problems.missingField(`stamp.${key}`);
  if (isAbsent(input.amount) || isAbsent(input.state_code) || isAbsent(input.article_id)) return null;
  const amountPaise = /^\d+(\.\d{1,2})?$/.test(input.amount!.trim()) ? parseRupees(input.amount!) : null;
  if (amountPaise === null || amountPaise <= 0n) {
    problems.invalidField('stamp.amount', 'a decimal string of rupees greater than 0, e.g. "500" or "500.00"');
    return null;
  }
  return {
    kind: 'amount',
    amountPaise,
    stateCode: input.state_code!.trim().toUpperCase(),
    articleId: input.article_id!.trim().toUpperCase(),
    firstPartyName: input.first_party_name?.trim() || undefined,
    secondPartyName: input.second_party_name?.trim() || undefined,
    mock,
  };
}
