/**
 * esign: sessions and their signers. Planning and starting a session (stamps reserved, invites queued),
 * the signer's turn, recording each signature, completion, cancel and expiry, the owner's reads (details,
 * lists, download, verification report, audit trail, outbox), and the messages signers receive.
 *
 * Rooms, each using the ones below it: `api/` the owner's face (resolvers, types, loaders, REST routes, reads);
 * `completion/` recording signatures, completion and its certificate, download, verification; `session/` the
 * session's life (request, plan, create, look-up, cancel, expire, decline); `signers/` the signer's turn and
 * hand-overs (locks, state, contact, tokens, reassign, resend, reminders, messages). At the root: the entity, the
 * events every room announces, the files' download names. This file is the surface for every other module;
 * signer-journey takes what it needs from `signer-side.ts` instead.
 */
import type { ModuleManifest } from '../../platform/module';
import { AuditResolver } from './api/audit-trail.resolver';
import { EsignDocument, EsignSession, Signer } from './esign-session.entity';
import { esignJobs } from './esign.jobs';
import { esignRestRoutes } from './api/esign.rest';
import { NotificationResolver } from './api/outbox.resolver';
import { sessionLoaders } from './api/session.loaders';
import { ElementResolver, EsignSessionResolver } from './api/session.resolver';
import { FieldValuesResolver, SignerFieldValuesResolver } from './api/field-values.resolver';
import { StampSessionResolver } from './api/stamp-session.resolver';
import { SignatureVerificationResolver } from './api/verify.resolver';

export { EsignSession, Signer, type SignType } from './esign-session.entity';
export { createSession, createSessions, type SessionToCreate } from './session/initialize-esign';
export { getOwnSession } from './session/own-session';
export { signerInviteUrl } from './signers/signer-token';
export { planSession } from './session/plan-session';
export type { DocumentPlan, SessionPlan } from './session/session-plan';
export { cachedReferences, referencesOf, type SessionReferences } from './session/check-references';
export { certificationReader, refuseForbiddenByCertification } from './session/document-certification';
export { documentIndex, requestedDocuments, type RequestedDocument } from './session/plan-documents';
export {
  DocumentInput,
  ElementInput,
  NotificationInput,
  SignerInput,
  SignerLayoutInput,
  StampRequestInput,
  type SessionRequest,
} from './session/session.inputs';
export { cancelSession } from './session/cancel-session';
export { SessionOptionsArgs } from './api/session.resolver';
export { EsignSessionType, toSessionView } from './api/session.types';
export { ElementType } from './api/signer.types';
export type { StoredElement } from './signers/signer-state';
export { AUTH_MODES, checkLanguage, checkLocation, LIMITS, SIGN_TYPES } from './session/validation';
export { planElements, type PlannedElementInput } from './elements/plan-element';
export { assetOf, valueProblem } from './elements/values';
export { kindOf } from './elements/registry';

export const esignModule: ModuleManifest = {
  name: 'esign',
  entities: [EsignSession, Signer, EsignDocument],
  resolvers: [
    EsignSessionResolver,
    ElementResolver,
    SignatureVerificationResolver,
    AuditResolver,
    NotificationResolver,
    StampSessionResolver,
    FieldValuesResolver,
    SignerFieldValuesResolver,
  ],
  restRoutes: esignRestRoutes,
  jobs: esignJobs,
  loaders: sessionLoaders,
};
