import { AppError } from '../../../platform/errors';
import type { Signer } from '../../esign/signer-side';

/** The pre-signing checks, in the order a signer goes through them (docs/signing.md). */
export type CheckKind = 'email' | 'mobile' | 'location' | 'face';

export interface CheckState {
  kind: CheckKind;
  status: 'pending' | 'passed' | 'failed';
}

/** Which checks this signer must pass: each only when requested. A geofence needs a location, so it implies one. */
export function requestedChecks(signer: Signer): CheckKind[] {
  const checks: CheckKind[] = [];
  if (signer.verifyEmail) checks.push('email');
  if (signer.verifyMobile) checks.push('mobile');
  if (signer.verifyLocation || signer.enforceGeofence) checks.push('location');
  if (signer.faceMatch.enforce) checks.push('face');
  return checks;
}

export function hasPassed(signer: Signer, kind: CheckKind): boolean {
  switch (kind) {
    case 'email':
      return !!signer.emailVerifiedAt;
    case 'mobile':
      return !!signer.mobileVerifiedAt;
    case 'location':
      return !!signer.location;
    case 'face':
      return signer.faceMatch.match_score !== null;
  }
}

export function nextCheck(signer: Signer): CheckKind | null {
  return requestedChecks(signer).find((kind) => !hasPassed(signer, kind)) ?? null;
}

/** A check runs once the earlier ones have passed, so that a signer goes through them in order. */
export function assertCheckIsDue(signer: Signer, kind: CheckKind): void {
  if (!requestedChecks(signer).includes(kind)) {
    throw new AppError('conflict', { message: `the ${kind} check was not requested for this signer` });
  }
  if (hasPassed(signer, kind)) throw new AppError('conflict', { message: `the ${kind} check has already passed` });
  const pendingBefore = requestedChecks(signer)
    .slice(0, requestedChecks(signer).indexOf(kind))
    .filter((earlier) => !hasPassed(signer, earlier));
  if (pendingBefore.length > 0) throw verificationRequired(pendingBefore);
}

/** Signing waits for every requested check. */
export function assertChecksPassed(signer: Signer): void {
  const pending = requestedChecks(signer).filter((kind) => !hasPassed(signer, kind));
  if (pending.length > 0) throw verificationRequired(pending);
}

function verificationRequired(pending: CheckKind[]): AppError {
  return new AppError('verification_required', {
    errors: pending.map((kind) => ({ field: kind, problem: 'not passed yet' })),
  });
}
