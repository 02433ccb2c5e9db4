import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { requireAdmin } from '../../platform/auth/require-admin';
import { checkPage } from '../../platform/graphql/paging';
import { formatRupees } from '../../platform/money';
import type { AppServices } from '../../platform/services';
import { Problems } from '../../platform/validation/problems';
import { listAccountAudit, type AccountAuditEvent } from '../audit';
import { unknownUser, User } from '../users';
import { listLedger, toWalletEntryView, walletBalance } from '../wallet';
import { subjectUserId } from './admin-inputs';
import type { AccountAuditEventType, AccountAuditPageType, AdminUserType, AdminWalletLedgerType } from './admin.types';
import { stampFeeView } from './set-user-stamp-fee';

interface PageInput {
  page?: number | null;
  size?: number | null;
}

/** The admin check, the user id and the paging arguments, then the user: unknown is `404 not_found`. */
async function subjectOf(em: EntityManager, actor: Actor, userIdInput: string | null | undefined, page?: PageInput) {
  requireAdmin(actor);
  const problems = new Problems();
  const userId = subjectUserId(problems, userIdInput);
  const refused = problems.toError();
  if (refused) throw refused;
  if (page) checkPage(page);
  const user = await em.findOne(User, { id: userId! });
  if (!user) throw unknownUser(userId!);
  return user;
}

/** Any user's balance and one page of their ledger, entries as the owner's own ledger shows them. */
export async function readAnyLedger(
  em: EntityManager,
  actor: Actor,
  input: { user_id?: string | null } & PageInput,
): Promise<AdminWalletLedgerType> {
  const user = await subjectOf(em, actor, input.user_id, input);
  const [balance, page] = await Promise.all([walletBalance(em, user.id), listLedger(em.fork(), user.id, input)]);
  return {
    user_id: user.id,
    balance: formatRupees(balance),
    currency: 'INR',
    items: page.items.map(toWalletEntryView),
    has_next: page.has_next,
  };
}

export async function readAnyUser(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  input: { user_id?: string | null },
): Promise<AdminUserType> {
  const user = await subjectOf(em, actor, input.user_id);
  return {
    ...stampFeeView(user.id, user.stampFeePaise ?? null, services.config.stamps.feePerStampPaise),
    email: user.email,
    created_at: user.createdAt,
    balance: formatRupees(await walletBalance(em, user.id)),
    currency: 'INR',
  };
}

function toAccountAuditView(event: AccountAuditEvent): AccountAuditEventType {
  return {
    event_id: event.id,
    action: event.action,
    user_id: event.subjectUser.id,
    actor_user_id: event.actorUserId ?? null,
    actor_token_id: event.actorTokenId ?? null,
    details: event.details,
    ip: event.ip ?? null,
    user_agent: event.userAgent ?? null,
    at: event.at,
  };
}

/** What admins (and the operator's CLI) changed on a user's account, newest first. */
export async function readAccountTrail(
  em: EntityManager,
  actor: Actor,
  input: { user_id?: string | null } & PageInput,
): Promise<AccountAuditPageType> {
  const user = await subjectOf(em, actor, input.user_id, input);
  const page = await listAccountAudit(em, user.id, input);
  return { items: page.items.map(toAccountAuditView), has_next: page.has_next };
}
