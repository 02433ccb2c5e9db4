/**
 * audit: the trail of every session (who did what, when, from where) and of every account (changes admins and
 * the operator made to a user's wallet and prices). A leaf: it stores the ids of the sessions, signers and users
 * it records and imports no other module.
 */
import type { ModuleManifest } from '../../platform/module';
import { AccountAuditEvent } from './account-audit-event.entity';
import { AuditEvent } from './audit-event.entity';

export { AccountAuditEvent, type AccountAuditAction } from './account-audit-event.entity';
export { listAccountAudit, recordAccountAudit } from './account-audit';
export { AuditEvent, type AuditEventKind } from './audit-event.entity';
export { AuditEventType, AuditTrailType, toAuditEventView } from './audit.types';
export { readAuditTrail, recordAudit, requestOrigin, type RequestOrigin } from './record-audit';

export const auditModule: ModuleManifest = { name: 'audit', entities: [AuditEvent, AccountAuditEvent] };
