/**
 * esign: sessions and their signers. Planning and starting a session (stamps reserved, invites queued),
 * the signer's turn, recording each signature, completion, cancel and expiry, the owner's reads (details,
 * lists, download, verification report, audit trail, outbox), and the messages signers receive.
 *
 * Rooms: `session/` the session's life (plan, create, cancel, expire, decline, its events); `signers/` the
 * signer's turn and hand-overs (locks, state, tokens, reassign, resend, reminders, messages); `completion/`
 * recording signatures, completion and its certificate, download, verification; `api/` the owner's face
 * (resolvers, types, inputs, loaders, REST routes, reads). This file is the surface for every other module;
 * signer-journey takes what it needs from `signer-side.ts` instead.
 */
import type { ModuleManifest } from '../../platform/module';
import { AuditResolver } from './api/audit-trail.resolver';
import { EsignSession, Signer } from './esign-session.entity';
import { esignJobs } from './esign.jobs';
import { esignRestRoutes } from './api/esign.rest';
import { NotificationResolver } from './api/outbox.resolver';
import { sessionLoaders } from './api/session.loaders';
import { ElementResolver, EsignSessionResolver } from './api/session.resolver';
import { StampSessionResolver } from './api/stamp-session.resolver';
import { SignatureVerificationResolver } from './api/verify.resolver';

export { EsignSession, Signer, type SignType } from './esign-session.entity';
export { createSession } from './session/initialize-esign';
export { planSession } from './session/plan-session';
export { ElementInput, SignerInput, SignerLayoutInput, type SessionRequest } from './api/session.inputs';
export { SessionOptionsArgs } from './api/session.resolver';
export { EsignSessionType, toSessionView } from './api/session.types';
export { ElementType } from './api/signer.types';
export type { StoredElement } from './signers/signer-state';
export { AUTH_MODES, checkLocation, LIMITS, planElements, SIGN_TYPES } from './session/validation';

export const esignModule: ModuleManifest = {
  name: 'esign',
  entities: [EsignSession, Signer],
  resolvers: [
    EsignSessionResolver,
    ElementResolver,
    SignatureVerificationResolver,
    AuditResolver,
    NotificationResolver,
    StampSessionResolver,
  ],
  restRoutes: esignRestRoutes,
  jobs: esignJobs,
  loaders: sessionLoaders,
};
