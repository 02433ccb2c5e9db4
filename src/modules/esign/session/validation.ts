import { newId } from '../../../platform/ids';
import { isAbsent, oneOf, text, type Problems } from '../../../platform/validation/problems';
import type { SignType } from '../esign-session.entity';
import type { ElementInput } from './session.inputs';
import type { StoredElement } from '../signers/signer-state';

/** Rules shared by every way of describing signers: initialize-esign, templates, initialize-from-template. */

export const SIGN_TYPES: readonly SignType[] = ['aadhaar', 'suresign', 'pfx'];
/** 1 = OTP, 2 = biometric (DESIGN.md, Coordinates and elements). */
export const AUTH_MODES = [1, 2] as const;
/** Signing backends; `sandbox` is the built-in simulated ESP, others arrive as adapters. */
export const ELEMENT_TYPES = ['signature', 'image'] as const;
export const ALIGNMENTS = ['left', 'center', 'right'] as const;

export const LIMITS = {
  expirySeconds: { min: 3600, max: 2_592_000, default: 604_800 },
  maxRetry: { min: 1, max: 10, default: 3 },
  reminderIntervalHours: { min: 1, max: 720 },
  reminderMax: { min: 1, max: 10, default: 3 },
  faceMatchThreshold: { min: 50, max: 100, default: 80 },
  faceMaxAttempts: { min: 1, max: 10, default: 5 },
  signers: { min: 1, max: 50 },
  elementsPerSigner: 50,
  radiusMetres: { min: 1, max: 1_000_000 },
} as const;

/** Sizes used when an element does not give its own (PDF points). */
export const ELEMENT_DEFAULTS = {
  signature: { width: 160, height: 50 },
  image: { width: 100, height: 100 },
  fontSize: 10,
} as const;

export function planElement(
  problems: Problems,
  field: string,
  input: ElementInput,
  options: { requireImageValue: boolean } = { requireImageValue: true },
): StoredElement | undefined {
  const before = problems.missing.length + problems.invalid.length;
  for (const key of ['x', 'y', 'page', 'type', 'alignment'] as const) {
    if (isAbsent(input[key])) problems.missingField(`${field}.${key}`);
  }
  const type = oneOf(problems, `${field}.type`, input.type, ELEMENT_TYPES);
  const alignment = oneOf(problems, `${field}.alignment`, input.alignment, ALIGNMENTS);
  for (const key of ['x', 'y'] as const) {
    const value = input[key];
    if (!isAbsent(value) && !(Number.isFinite(value) && value! >= 0 && value! <= 14_400)) {
      problems.invalidField(`${field}.${key}`, 'must be a number of PDF points from 0 to 14400');
    }
  }
  if (!isAbsent(input.page) && !(Number.isInteger(input.page) && input.page! >= 0)) {
    problems.invalidField(`${field}.page`, 'must be a zero-based page index');
  }
  for (const key of ['width', 'height', 'font_size'] as const) {
    const value = input[key];
    if (!isAbsent(value) && !(Number.isFinite(value) && value! > 0 && value! <= 14_400)) {
      problems.invalidField(`${field}.${key}`, 'must be a number greater than 0');
    }
  }
  const format = text(problems, `${field}.format`, input.format, 100);
  const value = text(problems, `${field}.value`, input.value, 500);
  if (options.requireImageValue && type === 'image' && value === undefined) problems.missingField(`${field}.value`);
  if (problems.missing.length + problems.invalid.length > before || !type || !alignment) return undefined;
  const size = ELEMENT_DEFAULTS[type];
  return {
    // Elements merged from a template keep the template's field ids.
    field_id: (input as { field_id?: string }).field_id ?? newId('field'),
    type,
    x: input.x!,
    y: input.y!,
    page: input.page!,
    alignment,
    width: input.width ?? size.width,
    height: input.height ?? size.height,
    allow_wet_signature: input.allow_wet_signature ?? false,
    font_size: input.font_size ?? ELEMENT_DEFAULTS.fontSize,
    format: format ?? null,
    value: value ?? null,
  };
}

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
 * A signer's elements. A signer with elements needs a `signature` among them (somewhere to draw it);
 * `requireSignature` makes one mandatory even when there are no elements (templates).
 */
export function planElements(
  problems: Problems,
  field: string,
  input: ElementInput[] | null | undefined,
  options: { requireSignature: boolean; requireImageValue: boolean },
): StoredElement[] {
  const elements = input ?? [];
  if (elements.length > LIMITS.elementsPerSigner)
    problems.invalidField(`${field}.elements`, `at most ${LIMITS.elementsPerSigner} elements`);
  const planned = elements.map((element, index) => planElement(problems, `${field}.elements[${index}]`, element, options));
  if ((elements.length > 0 || options.requireSignature) && !elements.some((element) => element.type === 'signature')) {
    problems.invalidField(`${field}.elements`, 'at least one element of type signature is needed to place the signature');
  }
  return planned.filter((element): element is StoredElement => element !== undefined);
}
