import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError, isAppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { recordAudit, type RequestOrigin } from '../audit';
import {
  EsignSession,
  lockTurn,
  signerByToken,
  recordSignature,
  publishSessionChange,
  type StoredElement,
  Signer,
} from '../esign';
import { assertChecksPassed } from './checks/checks';
import { StoredFile, storeBytes } from '../files';
import { openPfxCredential } from '../pfx';
import {
  espBackends,
  fillSignature,
  nameMatchScore,
  normalizeAadhaarNumber,
  platformSigningIdentity,
  readAadhaarCertDetails,
  signDetachedCms,
  type EspBackend,
  type ImagePlacement,
  type PreparedSignature,
  type SignatureAppearance,
  type SigningIdentity,
} from '../signing';

export const fieldNameOf = (signer: Signer) => signer.id;

/**
 * The working PDF, prepared once before the first signature: image elements drawn, one signature field per
 * signer at its placements (stamp pages already in front, so pages shift by them). Stored as a new file that
 * becomes the session's current PDF.
 */
async function ensurePrepared(services: AppServices, tx: EntityManager, session: EsignSession): Promise<Buffer> {
  const current = await tx.findOneOrFail(StoredFile, { id: session.currentPdfFile.id });
  if (session.preparedAt) return services.blobs.getBytes(current.storageKey);

  const signers = await tx.find(Signer, { session }, { orderBy: { position: 'asc' } });
  const shift = session.stampPageCount;
  const imageElements = signers.flatMap((signer) =>
    signer.elements.filter((element) => element.type === 'image' && element.value),
  );
  // A signature element may carry a wet-signature image (an asset): it shows inside that appearance.
  const isWet = (element: StoredElement) => element.type === 'signature' && !!element.value?.startsWith('file_');
  const assetIds = [...imageElements, ...signers.flatMap((signer) => signer.elements.filter(isWet))].map(
    (element) => element.value!,
  );
  const assets = new Map<string, { bytes: Buffer; mime: ImagePlacement['mime'] }>();
  for (const asset of await tx.find(StoredFile, { id: assetIds, user: session.user, kind: 'asset' })) {
    assets.set(asset.id, { bytes: await services.blobs.getBytes(asset.storageKey), mime: asset.mime as ImagePlacement['mime'] });
  }
  const images: ImagePlacement[] = imageElements
    .filter((element) => assets.has(element.value!))
    .map((element) => ({ ...element, page: element.page + shift, ...assets.get(element.value!)! }));
  // The one rewrite of the uploaded document: in the worker pool, as every parse of uploaded bytes.
  const prepared = await services.untrusted.run<Uint8Array>('prepareForSigningTask', {
    pdf: await services.blobs.getBytes(current.storageKey),
    signers: signers.map((signer) => ({
      fieldName: fieldNameOf(signer),
      signatureBoxes: signer.elements
        .filter((element) => element.type === 'signature')
        .map((element) => ({
          page: element.page + shift,
          x: element.x,
          y: element.y,
          width: element.width,
          height: element.height,
          wetImage: isWet(element) ? assets.get(element.value!) : undefined,
        })),
    })),
    images,
  });
  const file = await storeBytes(
    services.blobs,
    tx,
    { ownerId: session.user.id, kind: 'pdf', name: session.filename, mime: 'application/pdf', pageCount: current.pageCount },
    prepared,
  );
  session.currentPdfFile = file;
  session.preparedAt = new Date();
  await tx.flush();
  return Buffer.from(prepared);
}

interface SigningMaterial {
  sign(ranges: readonly Uint8Array[]): Promise<Uint8Array>;
  /** After signing: the certificate the ESP issued, for Aadhaar signers. */
  issuedCertificatePem?(): string | undefined;
}

async function platformOrPfx(services: AppServices, tx: EntityManager, signer: Signer): Promise<SigningMaterial> {
  let identity: SigningIdentity;
  if (signer.signType === 'suresign') identity = await platformSigningIdentity(services, tx);
  else {
    try {
      identity = await openPfxCredential(tx, services.config.secretsEncryptionKey, signer.pfxId!);
    } catch {
      throw new AppError('conflict', {
        message: 'the PFX certificate of this signer was deleted; the session cannot be signed with it',
      });
    }
  }
  return { sign: (content) => signDetachedCms(content, identity) };
}

function esp(session: EsignSession): EspBackend {
  const backend = espBackends[session.backend];
  if (!backend) throw new AppError('conflict', { message: `signing backend ${session.backend} is not available` });
  return backend;
}

/**
 * Aadhaar, step 1: the signer gives an Aadhaar number (checked with its Verhoeff digit) and consents; the
 * ESP of the session's backend starts a transaction and sends an OTP to the holder's registered mobile.
 */
export async function startAadhaarSigning(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { aadhaar_number?: string | null; consent?: boolean | null },
  origin: RequestOrigin,
): Promise<{ transaction_id: string; otp_sent_to: string; expires_at: Date }> {
  const found = await signerByToken(em, token);
  if (input.consent !== true)
    throw AppError.badRequest([{ field: 'consent', problem: 'the signer must consent to sign (consent: true)' }]);
  const aadhaar = normalizeAadhaarNumber(input.aadhaar_number ?? '');
  if (!aadhaar) {
    throw new AppError('invalid_aadhaar_number', {
      errors: [{ field: 'aadhaar_number', problem: '12 digits with a valid Verhoeff check digit' }],
    });
  }
  return em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    if (signer.signType !== 'aadhaar') throw new AppError('conflict', { message: `this signer signs with ${signer.signType}` });
    assertChecksPassed(signer);
    const started = await esp(session).startTransaction(
      { services, em: tx },
      { aadhaar, authMode: signer.authMode, signerId: signer.id },
    );
    recordAudit(tx, { session, signer, event: 'otp_sent', origin, details: { channel: 'aadhaar', sent_to: started.otpSentTo } });
    await tx.flush();
    return { transaction_id: started.transactionId, otp_sent_to: started.otpSentTo, expires_at: started.expiresAt };
  });
}

/**
 * A wrong OTP costs one of `max_retry` attempts, kept even though the request fails (its own transaction:
 * the caller's is rolled back); the last one fails the signer.
 */
async function countFailedAttempt(
  services: AppServices,
  em: EntityManager,
  session: EsignSession,
  signerId: string,
): Promise<{ left: number }> {
  return em.fork().transactional(async (tx) => {
    const [row] = await tx.getConnection().execute<{ failed_attempts: number; max_retry: number; status: string }[]>(
      `update esign_signers set failed_attempts = failed_attempts + 1,
              status = case when failed_attempts + 1 >= max_retry then 'failed' else status end
        where id = ? returning failed_attempts, max_retry, status`,
      [signerId],
      'all',
      tx.getTransactionContext(),
    );
    await publishSessionChange(services, tx, {
      client_id: session.id,
      user_id: session.user.id,
      status: session.status,
      signer_id: signerId,
      signer_status: row.status,
    });
    return { left: Math.max(0, row.max_retry - row.failed_attempts) };
  });
}

async function aadhaarMaterial(
  services: AppServices,
  tx: EntityManager,
  session: EsignSession,
  signer: Signer,
  input: { transaction_id?: string | null; otp?: string | null },
): Promise<SigningMaterial> {
  if (!input.transaction_id || !input.otp) throw AppError.missingFields([!input.transaction_id ? 'transaction_id' : 'otp']);
  const backend = esp(session);
  const ctx = { services, em: tx };
  const authenticated = await backend.authenticate(ctx, {
    transactionId: input.transaction_id,
    signerId: signer.id,
    otp: input.otp,
  });
  if (!authenticated.ok) {
    if (authenticated.reason === 'transaction_unknown') {
      throw AppError.badRequest([{ field: 'transaction_id', problem: 'no open transaction for this signer' }]);
    }
    const { left } = await countFailedAttempt(services, tx, session, signer.id);
    throw new AppError(authenticated.reason, {
      message: authenticated.reason,
      errors: [{ field: 'otp', problem: left > 0 ? `${left} attempt(s) left` : 'no attempts left: this signer has failed' }],
    });
  }
  let issued: string | undefined;
  return {
    sign: async (content) => {
      const signed = await backend.sign(ctx, { transactionId: input.transaction_id!, content });
      issued = signed.certificatePem;
      return signed.cms;
    },
    issuedCertificatePem: () => issued,
  };
}

/** What the ESP's certificate says about the holder, and how well its name matches the one expected. */
function recordAadhaarIdentity(signer: Signer, certificatePem: string): void {
  const details = readAadhaarCertDetails(certificatePem);
  if (!details) return;
  signer.aadhaarCertDetails = details;
  if (signer.nameMatch.enforce) {
    signer.nameMatch = {
      ...signer.nameMatch,
      signer_name: details.name,
      score: nameMatchScore(details.name, signer.nameMatch.prefill_name ?? signer.fullName),
      status: 'completed',
    };
  }
}

/**
 * The signer whose turn it is signs, on consent (Aadhaar signers with their OTP transaction): one incremental
 * PAdES signature over the current PDF, with its appearance at the signer's placements. The session row is
 * locked for the whole step, so a double submit cannot sign twice.
 */
export async function signAsSigner(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { consent?: boolean | null; transaction_id?: string | null; otp?: string | null },
  origin: RequestOrigin,
): Promise<EsignSession> {
  const found = await signerByToken(em, token);
  if (input.consent !== true)
    throw AppError.badRequest([{ field: 'consent', problem: 'the signer must consent to sign (consent: true)' }]);
  try {
    return await signInTurn(services, em, found, input, origin);
  } catch (error) {
    if (isAppError(error) && (error.code === 'otp_invalid' || error.code === 'otp_expired')) {
      await auditRefusedOtp(em.fork(), found, origin, error);
    }
    throw error;
  }
}

/**
 * A refused Aadhaar OTP is recorded after the signing transaction rolled back (it held the session row, which
 * the audit row refers to), together with the signer's failure when that was the last attempt.
 */
async function auditRefusedOtp(em: EntityManager, found: Signer, origin: RequestOrigin, error: AppError) {
  await em.transactional(async (tx) => {
    const signer = await tx.findOneOrFail(Signer, { id: found.id });
    const session = tx.getReference(EsignSession, found.session.id);
    const left = Math.max(0, signer.maxRetry - signer.failedAttempts);
    recordAudit(tx, {
      session,
      signer,
      event: 'otp_failed',
      origin,
      details: { channel: 'aadhaar', reason: error.code, attempts_left: left },
    });
    if (signer.status === 'failed') {
      recordAudit(tx, { session, signer, event: 'signer_failed', origin, details: { reason: 'Aadhaar OTP retries exhausted' } });
    }
  });
}

async function signInTurn(
  services: AppServices,
  em: EntityManager,
  found: Signer,
  input: { transaction_id?: string | null; otp?: string | null },
  origin: RequestOrigin,
): Promise<EsignSession> {
  return em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    assertChecksPassed(signer);
    const material =
      signer.signType === 'aadhaar'
        ? await aadhaarMaterial(services, tx, session, signer, input)
        : await platformOrPfx(services, tx, signer);
    const working = await ensurePrepared(services, tx, session);
    const time = new Date();
    const appearance: SignatureAppearance = {
      fieldName: fieldNameOf(signer),
      signerName: signer.fullName,
      reason: signer.reason,
      time,
      appearanceLines: [
        `Digitally signed by ${signer.fullName}`,
        `Date: ${time.toISOString().replace('T', ' ').slice(0, 19)} UTC`,
        ...(signer.reason ? [`Reason: ${signer.reason}`] : []),
      ],
    };
    // The update is built from the parsed document in the worker pool; the key signs here.
    const update = await services.untrusted.run<PreparedSignature>('buildSignatureUpdateTask', { pdf: working, appearance });
    const { updated, contentsAt, contentsEnd } = update;
    const signed = fillSignature(update, await material.sign([updated.subarray(0, contentsAt), updated.subarray(contentsEnd)]));
    const issued = material.issuedCertificatePem?.();
    if (issued) recordAadhaarIdentity(signer, issued);
    recordAudit(tx, {
      session,
      signer,
      event: 'signed',
      origin,
      details: { sign_type: signer.signType, field: fieldNameOf(signer), signed_at: time.toISOString() },
    });
    await tx.flush();
    const recorded = await recordSignature(services, tx, { sessionId: session.id, signerId: signer.id, signedPdf: signed });
    if (recorded.status === 'completed') recordAudit(tx, { session: recorded, event: 'session_completed' });
    await tx.flush();
    return recorded;
  });
}
