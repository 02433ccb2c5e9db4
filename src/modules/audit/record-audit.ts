import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request } from 'express';
import type { EsignSession } from '../esign/esign-session.entity';
import type { Signer } from '../esign/signer.entity';
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
    session: EsignSession;
    signer?: Signer;
    event: AuditEventKind;
    origin?: RequestOrigin;
    details?: Record<string, unknown>;
  },
): AuditEvent {
  return em.create(AuditEvent, {
    session: input.session,
    signer: input.signer,
    event: input.event,
    at: new Date(),
    ip: input.origin?.ip ?? undefined,
    userAgent: input.origin?.userAgent ?? undefined,
    details: input.details,
  });
}
