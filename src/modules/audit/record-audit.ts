import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request } from 'express';
import type { RowRef } from '../../platform/db/row-ref';
import { AuditEvent, type AuditEventKind } from './audit-event.entity';

/** Where a request came from: `req.ip` honours TRUST_PROXY, so a forwarded address counts only behind a trusted proxy. */
export interface RequestOrigin {
  ip: string | null;
  userAgent: string | null;
}

export function requestOrigin(req: Request): RequestOrigin {
  const userAgent = req.headers['user-agent'];
  return { ip: req.ip ?? null, userAgent: userAgent ? userAgent.slice(0, 500) : null };
}

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
