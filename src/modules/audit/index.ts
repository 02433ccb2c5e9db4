/**
 * audit: the trail of every session (who did what, when, from where). A leaf: it stores the ids of the
 * sessions and signers it records and imports no other module.
 */
import type { ModuleManifest } from '../../platform/module';
import { AuditEvent } from './audit-event.entity';

export { AuditEvent, type AuditEventKind } from './audit-event.entity';
export { AuditEventType, AuditTrailType, toAuditEventView } from './audit.types';
export { readAuditTrail, recordAudit, requestOrigin, type RequestOrigin } from './record-audit';

export const auditModule: ModuleManifest = { name: 'audit', entities: [AuditEvent] };
