/**
 * esign: sessions and their signers. Planning and starting a session (stamps reserved, invites queued),
 * the signer's turn, recording each signature, completion, cancel and expiry, the owner's reads (details,
 * lists, download, verification report, audit trail, outbox), and the messages signers receive.
 */
import type { ModuleManifest } from '../../platform/module';
import { AuditResolver } from './audit-trail.resolver';
import { EsignSession, Signer } from './esign-session.entity';
import { esignJobs } from './esign.jobs';
import { esignRestRoutes } from './esign.rest';
import { NotificationResolver } from './outbox.resolver';
import { sessionLoaders } from './session.loaders';
import { ElementResolver, EsignSessionResolver } from './session.resolver';
import { StampSessionResolver } from './stamp-session.resolver';
import { SignatureVerificationResolver } from './verify.resolver';

export { EsignSession, Signer, type SignType } from './esign-session.entity';
export { createSession } from './initialize-esign';
export { planSession } from './plan-session';
export { recordDecline } from './decline-session';
export { handOverSigner } from './reassign-signer';
export { completeDocument, type CompletedDocument } from './completion-certificate';
export { recordSignature } from './record-signature';
export { publishSignerChange, recordSessionWebhook } from './session-events';
export { ElementInput, SignerInput, SignerLayoutInput, type SessionRequest } from './session.inputs';
export { SessionOptionsArgs } from './session.resolver';
export { EsignSessionType, toSessionView } from './session.types';
export { ElementType, positionsOf } from './signer.types';
export { queueOneTimeCode } from './signer-messages';
export type { SignerLocation, StoredElement } from './signer-state';
export { isSignersTurn, lockSessionOf, lockSessionOfSigner, lockSigner, lockTurn, signerByToken } from './signer-turn';
export { AUTH_MODES, checkLocation, LIMITS, planElements, SIGN_TYPES } from './validation';

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
