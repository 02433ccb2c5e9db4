import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import type { RowRef } from '../../platform/db/row-ref';
import { checkPage, pageOf } from '../../platform/graphql/paging';
import type { RequestOrigin } from '../../platform/auth/request-origin';
import { AccountAuditEvent, type AccountAuditAction } from './account-audit-event.entity';

/**
 * Records an action on a user's account in the caller's transaction (written when it flushes, at the latest on
 * commit), so that it stands or falls with the change. `actor` is the admin token's; none for the operator's CLI.
 */
export function recordAccountAudit(
  tx: EntityManager,
  input: {
    subjectUserId: string;
    action: AccountAuditAction;
    actor?: Actor;
    origin?: RequestOrigin;
    details: Record<string, unknown>;
  },
): AccountAuditEvent {
  return tx.create(AccountAuditEvent, {
    subjectUser: tx.getReference<RowRef>('User', input.subjectUserId),
    action: input.action,
    actorUserId: input.actor?.userId,
    actorTokenId: input.actor?.tokenId,
    details: input.details,
    ip: input.origin?.ip ?? undefined,
    userAgent: input.origin?.userAgent ?? undefined,
    at: new Date(),
  });
}

/** A user's account trail, newest first. */
export async function listAccountAudit(
  em: EntityManager,
  subjectUserId: string,
  args: { page?: number | null; size?: number | null },
): Promise<{ items: AccountAuditEvent[]; has_next: boolean }> {
  const { offset, limit } = checkPage(args);
  const rows = await em.find(
    AccountAuditEvent,
    { subjectUser: subjectUserId },
    { orderBy: { seq: 'desc' }, offset, limit: limit + 1 },
  );
  return pageOf(rows, limit);
}
