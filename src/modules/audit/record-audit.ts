import type { EntityManager } from '@mikro-orm/postgresql';
import type { RowRef } from '../../platform/db/row-ref';
import type { RequestOrigin } from '../../platform/auth/request-origin';
import { AuditEvent, type AuditEventKind } from './audit-event.entity';

// The request context knows the origin too (admin operations record it), so its rule lives in platform.
export { requestOrigin, type RequestOrigin } from '../../platform/auth/request-origin';

/** Adds one step to the session's audit trail, in the caller's transaction: it stands or falls with the step. */
export function recordAudit(
  em: EntityManager,
  input: {
    session: RowRef;
    signer?: RowRef;
    event: AuditEventKind;
    origin?: RequestOrigin;
    details?: Record<string, unknown>;
  },
): AuditEvent {
  return em.create(AuditEvent, {
    session: em.getReference<RowRef>('EsignSession', input.session.id),
    signer: input.signer && em.getReference<RowRef>('Signer', input.signer.id),
    event: input.event,
    at: new Date(),
    ip: input.origin?.ip ?? undefined,
    userAgent: input.origin?.userAgent ?? undefined,
    details: input.details,
  });
}

/** A session's trail, oldest step first. */
export function readAuditTrail(em: EntityManager, sessionId: string): Promise<AuditEvent[]> {
  return em.find(AuditEvent, { session: sessionId }, { orderBy: { seq: 'asc' } });
}
