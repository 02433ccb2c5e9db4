import type { EntityManager } from '@mikro-orm/postgresql';
import {
  currentPageOf,
  documentOf,
  documentsOf,
  documentsSignedBy,
  EsignSession,
  isSignersTurn,
  positionsOf,
  Signer,
  signatureElements,
  signerForm,
  stampShiftOf,
} from '../esign/signer-side';
import { hasPassed, nextCheck, requestedChecks, type CheckKind } from './checks/checks';
import { maskEmail, maskPhone } from './checks/recipients';
import { isSignerCancellation } from '../signing';
import { batchesOf, HELD_TOO_LONG } from './aadhaar/esp-batches';
import { TIMED_OUT } from './aadhaar/esp-outcomes';
import { EspTransaction } from './aadhaar/esp-transaction.entity';
import { latestDscTransaction } from './dsc/dsc-outcomes';
import { embedOriginsOf } from '../users';

function checkView(signer: Signer, kind: CheckKind) {
  const status = hasPassed(signer, kind) ? 'passed' : 'pending';
  switch (kind) {
    case 'email':
      return { kind, status, sent_to: signer.email ? maskEmail(signer.email) : null };
    case 'mobile':
      return { kind, status, sent_to: signer.mobile ? maskPhone(`+${signer.countryCode ?? ''}${signer.mobile}`) : null };
    case 'location':
      return {
        kind,
        status,
        source: signer.locationSource ?? 'device',
        geofence: signer.enforceGeofence
          ? { latitude: signer.latitude, longitude: signer.longitude, radius: signer.radius }
          : null,
      };
    case 'face': {
      const left = Math.max(0, (signer.faceMatch.max_attempts ?? 0) - signer.faceAttempts);
      return { kind, status: status === 'pending' && left === 0 ? 'failed' : status, attempts_left: left };
    }
  }
}

/** What a signer may see: their own part, whose turn it is, the checks ahead, and the session's state. Never other tokens. */
export async function signerView(em: EntityManager, signer: Signer) {
  const session = await em.findOneOrFail(EsignSession, { id: signer.session.id });
  const signers = await em.find(Signer, { session }, { orderBy: { position: 'asc' } });
  const current = signers.find((s) => s.position === session.signerIdx);
  const decliner = signers.find((s) => s.status === 'declined');
  const documents = await documentsOf(em, session);
  const signs = new Set(documentsSignedBy(signer, documents.length));
  return {
    session: {
      client_id: session.id,
      status: session.status,
      filename: session.filename,
      sender: session.sender ?? null,
      signer_idx: session.signerIdx,
      signing_order: session.signingOrder,
      signer_count: signers.length,
      allow_download: session.allowDownload,
      redirect_url: session.redirectUrl ?? null,
      email_template_overrides: session.emailTemplateOverrides ?? null,
      expires_at: session.expiresAt,
      // The envelope, in the order the page shows it: GET /signer-api/document?document=<position> reads each.
      documents: documents.map((document) => ({
        position: document.position,
        name: document.name,
        stamp_pages: stampShiftOf(session, document.position),
        signed_by_you: signs.has(document.position),
      })),
      // Who ended the session by declining (their reason is theirs and the owner's to read).
      declined_by: decliner ? decliner.fullName : null,
      // The sites that may frame this page: an embedded page tells them what happens (docs/embedding.md).
      embed_origins: await embedOriginsOf(em, session.user.id),
    },
    signer: {
      signer_id: signer.id,
      full_name: signer.fullName,
      sign_type: signer.signType,
      // The language the signer reads in (the sender's choice, or the signer's own on the page); null: not set.
      language: signer.language ?? null,
      reason: signer.reason ?? null,
      status: signer.status,
      decline_reason: signer.declineReason ?? null,
      eligible: isSignersTurn(session, signer),
      // Signing attempts left before the signer fails (Aadhaar: each ESP refusal costs one).
      attempts_left: Math.max(0, signer.maxRetry - signer.failedAttempts),
      // Aadhaar signers: their latest eSign transaction with the ESP (pending, held, completed, failed, expired), or null.
      esp_transaction: signer.signType === 'aadhaar' ? await latestEspTransaction(em, signer.id) : null,
      // Aadhaar signers: how many ESP transactions (one authentication each) sign their documents, five at most in each.
      esp_batches: signer.signType === 'aadhaar' ? batchesOf([...signs]).length : null,
      // DSC signers: their latest DSC transaction (pending, completed, failed, expired), or null.
      dsc_transaction: signer.signType === 'dsc' ? await latestDscTransaction(em, signer.id) : null,
      positions: positionsOf(signer.elements, session),
      // Where this signer's signature goes, on the pages of each document's current PDF (stamp pages come first).
      fields: signatureElements(signer.elements).map((element) => ({
        document: documentOf(element),
        page: currentPageOf(element, session),
        x: element.x,
        y: element.y,
        width: element.width,
        height: element.height,
      })),
      // The fields this signer fills (or sees filled), with their rules and boxes.
      form: signerForm(signer, session),
    },
    // A parallel session has no one turn: every pending signer may sign.
    whose_turn:
      session.status === 'pending' && session.signingOrder === 'sequential' && current
        ? { position: current.position, full_name: current.fullName }
        : null,
    checks: requestedChecks(signer).map((kind) => checkView(signer, kind)),
    next_check: nextCheck(signer),
  };
}

/** The signer's latest eSign transaction, as the signer's view shows it. */
export async function latestEspTransaction(em: EntityManager, signerId: string) {
  const latest = await em.findOne(EspTransaction, { signer: signerId }, { orderBy: { createdAt: 'desc' } });
  if (!latest) return null;
  // Past its time, a pending transaction timed out and a held batch waited too long (the sweep will say so too).
  const expired = (latest.status === 'pending' || latest.status === 'held') && latest.expiresAt <= new Date();
  const held = latest.status === 'held';
  return {
    txn: latest.txn,
    status: expired ? ('expired' as const) : latest.status,
    error_code: expired ? (held ? 'esp_batch_voided' : 'esp_timeout') : (latest.errorCode ?? null),
    error_message: expired ? (held ? HELD_TOO_LONG : TIMED_OUT) : (latest.errorMessage ?? null),
    // The signer cancelled at the ESP (a failed transaction that cost no attempt): the page says so in the second person.
    cancelled_by_signer: latest.status === 'failed' && isSignerCancellation(latest.errorCode),
    expires_at: latest.expiresAt,
    // Which of the signer's batches it signs, of how many, and how many documents it carries.
    batch: { number: latest.batch, of: latest.batchCount, documents: latest.documents.length },
  };
}
