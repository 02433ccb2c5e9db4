import { LANGUAGES, type Language } from '../../../platform/i18n';
import { isAbsent, oneOf, type Problems } from '../../../platform/validation/problems';
import { ELEMENTS_PER_SIGNER } from '../elements/plan-element';
import type { SignType } from '../esign-session.entity';

/** Rules shared by every way of describing signers: initialize-esign, templates, initialize-from-template. */

export const SIGN_TYPES: readonly SignType[] = ['aadhaar', 'suresign', 'pfx', 'dsc'];
/** 1 = OTP, 2 = biometric (DESIGN.md, Coordinates and elements). */
export const AUTH_MODES = [1, 2] as const;
export const LIMITS = {
  expirySeconds: { min: 3600, max: 2_592_000, default: 604_800 },
  maxRetry: { min: 1, max: 10, default: 3 },
  reminderIntervalHours: { min: 1, max: 720 },
  reminderMax: { min: 1, max: 10, default: 3 },
  faceMatchThreshold: { min: 50, max: 100, default: 80 },
  faceMaxAttempts: { min: 1, max: 10, default: 5 },
  signers: { min: 1, max: 50 },
  /** Documents in one envelope (docs/api.md, Envelopes). */
  documents: { min: 1, max: 10 },
  elementsPerSigner: ELEMENTS_PER_SIGNER,
  radiusMetres: { min: 1, max: 1_000_000 },
} as const;

export interface LocationInput {
  verify_location?: boolean | null;
  location_source?: string | null;
  enforce_geofence?: boolean | null;
  latitude?: number | null;
  longitude?: number | null;
  radius?: number | null;
}

/** Location and geofence settings: the three geofence fields come together and within range. */
export function checkLocation(problems: Problems, field: string, input: LocationInput): 'device' | 'ip' | undefined {
  const locationSource = oneOf(problems, `${field}.location_source`, input.location_source, ['device', 'ip'] as const);
  if (input.enforce_geofence) {
    for (const key of ['latitude', 'longitude', 'radius'] as const)
      if (isAbsent(input[key])) problems.missingField(`${field}.${key}`);
  }
  if (!isAbsent(input.latitude) && !(input.latitude! >= -90 && input.latitude! <= 90)) {
    problems.invalidField(`${field}.latitude`, 'must be from -90 to 90');
  }
  if (!isAbsent(input.longitude) && !(input.longitude! >= -180 && input.longitude! <= 180)) {
    problems.invalidField(`${field}.longitude`, 'must be from -180 to 180');
  }
  if (!isAbsent(input.radius) && !(input.radius! >= LIMITS.radiusMetres.min && input.radius! <= LIMITS.radiusMetres.max)) {
    problems.invalidField(`${field}.radius`, `must be ${LIMITS.radiusMetres.min} to ${LIMITS.radiusMetres.max} metres`);
  }
  return locationSource;
}

/**
 * A signer's `language`: one of the documented BCP 47 tags (platform/i18n's LANGUAGES), any case; absent or blank:
 * not set (English messages). Anything else is `400 bad_request` naming the field.
 */
export function checkLanguage(problems: Problems, field: string, value: string | null | undefined): Language | undefined {
  if (isAbsent(value)) return undefined;
  return oneOf(problems, `${field}.language`, typeof value === 'string' ? value.trim().toLowerCase() : value, LANGUAGES);
}
