/**
 * What the signer's side (signer-journey: the signing page, the signer API, the checks and the ESP hand-off) uses
 * of esign, and nothing else: finding a signer by their link's token, taking their turn under the session's lock,
 * recording what they do (signature, decline, hand-over, codes) and announcing it. Only signer-journey may import
 * this file (the lint's rule `esign-signer-side`); every other module uses esign's index.ts.
 */
export { EsignDocument, EsignSession, Signer } from './esign-session.entity';
export {
  currentPageOf,
  documentsOf,
  documentsSignedBy,
  documentSummary,
  elementsOn,
  stampShiftOf,
  storeRevision,
} from './documents';
export { documentOf } from './elements/stored-element';
export type { SignerLocation, StoredElement } from './signers/signer-state';
export { isSignersTurn, lockSessionOf, lockSessionOfSigner, lockSigner, lockTurn, signerByToken } from './signers/signer-turn';
export { handOverSigner } from './signers/reassign-signer';
export { queueOneTimeCode } from './signers/signer-messages';
export { recordDecline } from './session/decline-session';
export { publishSignerChange, recordSessionWebhook } from './session-events';
export { positionsOf } from './api/signer.types';
export { recordSignature } from './completion/record-signature';
export { completeEnvelope, type CompletedEnvelope } from './completion/completion-certificate';
export {
  assetIdsOf,
  formFieldLayouts,
  lockedFieldNames,
  pageImageElements,
  signatureElements,
  signerFills,
} from './elements/pdf-layout';
export { assertFieldsComplete, fillServiceValues, fillSignerValues, keepValues } from './elements/fill-values';
export { signerForm } from './elements/signer-form';
export { kindOf } from './elements/registry';
