import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import { type Signer, lockSessionOf, lockTurn, recordSessionWebhook, signerByToken } from '../../esign/signer-side';
import { FaceMatchError, type FaceComparison } from '../../../platform/face';
import { StoredFile, storeBytes, type ImageFacts } from '../../files';
import { assertCheckIsDue, hasPassed } from './checks';
import { publishCheckProgress } from './one-time-codes';
import { readUploadedImage } from '../uploaded-image';

export const FACE_PHOTO_MAX_BYTES = 5 * 1024 * 1024;

export interface FaceCheckResult {
  status: 'passed';
  match_score: number;
  liveness_score: number;
  attempts_left: number;
}

const attemptsLeft = (signer: Signer) => Math.max(0, (signer.faceMatch.max_attempts ?? 0) - signer.faceAttempts);
const round = (score: number) => Math.round(score * 10) / 10;

/**
 * Face match: the live photo is compared with the owner's reference photo (`face_ref_file_id`) by the
 * configured FaceMatcher. An attempt is taken before the comparison (so concurrent tries cannot exceed
 * `face_max_attempts`); the last failed one fails the signer. Scores are recorded on success only.
 */
export async function checkFace(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  upload: { type: string; bytes: Buffer | undefined },
  origin: RequestOrigin,
): Promise<FaceCheckResult> {
  const found = await signerByToken(em, token);
  const { bytes: photo, facts } = await readUploadedImage(services, upload, { field: 'image', noun: 'photo' });
  const taken = await takeAttempt(services, em, found, photo, facts);
  const { comparison, refusal } = await compareFaces(services, em, found, taken.reference, photo);
  const outcome = await recordFaceOutcome(services, em, found, { ...taken, comparison, refusal, origin });
  return answerOf(outcome, comparison, refusal);
}

/** 1. Take an attempt and keep the photo: it is the owner's evidence whatever the outcome. */
async function takeAttempt(services: AppServices, em: EntityManager, found: Signer, photo: Buffer, facts: ImageFacts) {
  return em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    assertCheckIsDue(signer, 'face');
    if (attemptsLeft(signer) === 0) throw new AppError('conflict', { message: 'no face match attempts left' });
    const reference = await tx.findOne(StoredFile, { id: signer.faceMatch.ref_file_id!, user: session.user });
    if (!reference) throw new AppError('conflict', { message: 'the reference photo of this signer is no longer available' });
    signer.faceAttempts += 1;
    const live = await storeBytes(
      services.blobs,
      tx,
      {
        ownerId: session.user.id,
        kind: 'asset',
        name: `face-${signer.id}-${signer.faceAttempts}.${facts.mime === 'image/png' ? 'png' : 'jpg'}`,
        mime: facts.mime,
        widthPx: facts.width,
        heightPx: facts.height,
      },
      photo,
    );
    signer.faceMatch = { ...signer.faceMatch, live_file_id: live.id };
    return { reference: reference.storageKey, attempt: signer.faceAttempts, liveFileId: live.id };
  });
}

/**
 * 2. Compare, outside any transaction: the model runs in its own thread and may take a second. A photo the matcher
 * refuses (no face, several) is an answer; a failure on our side gives the attempt back and is thrown.
 */
async function compareFaces(services: AppServices, em: EntityManager, found: Signer, reference: string, photo: Buffer) {
  let comparison: FaceComparison | null = null;
  let refusal: FaceMatchError | null = null;
  try {
    comparison = await services.faces.compare(await services.blobs.getBytes(reference), photo);
  } catch (error) {
    if (!(error instanceof FaceMatchError)) {
      await giveBackAttempt(em, found);
      services.log.error({ err: error }, 'face matcher failed');
      throw new AppError('service_unavailable', { message: 'face matching is unavailable right now: try again' });
    }
    if (error.which === 'reference') {
      await giveBackAttempt(em, found);
      throw new AppError('conflict', { message: `the reference photo cannot be used: ${error.message}` });
    }
    refusal = error;
  }
  return { comparison, refusal };
}

interface FaceAttempt {
  attempt: number;
  liveFileId: string;
  comparison: FaceComparison | null;
  refusal: FaceMatchError | null;
  origin: RequestOrigin;
}

/**
 * 3. Record the outcome. The attempt was taken under the turn's checks in step 1: it is recorded (and answered as
 * what it was) even if a concurrent attempt has failed the signer meanwhile.
 */
async function recordFaceOutcome(services: AppServices, em: EntityManager, found: Signer, at: FaceAttempt) {
  const { attempt, liveFileId, comparison, refusal, origin } = at;
  return em.fork().transactional(async (tx) => {
    const { session, signer } = await lockSessionOf(tx, found);
    const threshold = signer.faceMatch.match_threshold ?? 80;
    const passed = comparison !== null && comparison.matchScore >= threshold;
    recordAudit(tx, {
      session,
      signer,
      event: 'face_attempt',
      origin,
      details: {
        attempt,
        live_file_id: liveFileId,
        passed,
        ...(comparison
          ? { match_score: round(comparison.matchScore), liveness_score: round(comparison.livenessScore), threshold }
          : { refused: refusal!.reason }),
      },
    });
    const passedBefore = hasPassed(signer, 'face'); // a concurrent attempt may have passed meanwhile
    // Nothing changes for a signer or session that has ended meanwhile (failed by a concurrent attempt, cancelled).
    // The attempt stays in the trail either way, and its answer is what it was.
    const open = session.status === 'pending' && signer.status === 'pending';
    if (open && passed && !passedBefore) {
      signer.faceMatch = {
        ...signer.faceMatch,
        live_file_id: liveFileId, // the photo that passed
        match_score: round(comparison!.matchScore),
        liveness_score: round(comparison!.livenessScore),
      };
    } else if (open && !passed && !passedBefore && attempt >= (signer.faceMatch.max_attempts ?? 0)) {
      // The last attempt decides (an earlier one may still be comparing when a later one was taken).
      signer.status = 'failed';
      recordAudit(tx, { session, signer, event: 'signer_failed', origin, details: { reason: 'face match attempts exhausted' } });
      await recordSessionWebhook(services, tx, { id: session.id, userId: session.user.id }, 'esign.signer.failed', signer.id);
    }
    await publishCheckProgress(services, tx, session, signer);
    return { passed, left: attemptsLeft(signer), threshold };
  });
}

/** The answer: the scores when the face matched, else the refusal or the mismatch with the attempts left. */
function answerOf(
  outcome: { passed: boolean; left: number; threshold: number },
  comparison: FaceComparison | null,
  refusal: FaceMatchError | null,
): FaceCheckResult {
  const left = outcome.left > 0 ? `${outcome.left} attempt(s) left` : 'no attempts left: this signer has failed';
  if (refusal) {
    const why =
      refusal.reason === 'several_faces' ? 'several faces in the photo: only you should be in it' : 'no face found in the photo';
    throw new AppError('face_not_found', { errors: [{ field: 'image', problem: `${why}; ${left}` }] });
  }
  if (!outcome.passed) {
    throw new AppError('face_mismatch', {
      errors: [
        {
          field: 'image',
          problem: `the face does not match (score ${round(comparison!.matchScore)}, ${outcome.threshold} needed); ${left}`,
        },
      ],
    });
  }
  return {
    status: 'passed',
    match_score: round(comparison!.matchScore),
    liveness_score: round(comparison!.livenessScore),
    attempts_left: outcome.left,
  };
}

/** An attempt that failed on our side (the model, or the owner's reference photo) does not count against the signer. */
async function giveBackAttempt(em: EntityManager, found: Signer) {
  await em
    .fork()
    .getConnection()
    .execute(`update esign_signers set face_attempts = greatest(0, face_attempts - 1) where id = ?`, [found.id]);
}
