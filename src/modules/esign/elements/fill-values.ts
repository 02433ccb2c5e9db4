import { AppError } from '../../../platform/errors';
import { Problems } from '../../../platform/validation/problems';
import type { Signer } from '../esign-session.entity';
import type { StoredElement } from './stored-element';
import { kindOf } from './registry';
import { VALUE_MAX_CHARACTERS } from './text-rules';
import { signerFilled, valueProblem } from './values';

/** Where the signing page sends a seal (or any image field): the image itself, not a value. */
export const imageFieldPath = (fieldId: string) => `/signer-api/fields/${fieldId}/image`;

/** A value as the signer's request gives it: text, or for a checkbox a boolean. */
function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * The values a signer gives for their own fields (`values`: field_id to value), checked against each element's rules
 * as the page checks them, and kept on the signer, all of them or (with a `400` naming each bad one as
 * `values.<field_id>`) none. A field may be filled again until the signer signs; an empty value clears it.
 */
export function fillSignerValues(signer: Signer, values: unknown, now: Date): void {
  if (values === undefined || values === null) throw AppError.missingFields(['values']);
  if (typeof values !== 'object' || Array.isArray(values))
    throw AppError.badRequest([{ field: 'values', problem: 'an object from field_id to value' }]);
  const own = new Map(signerFilled(signer.elements).map((element) => [element.field_id, element]));
  const problems = new Problems();
  const given = new Map<string, string>();
  for (const [fieldId, raw] of Object.entries(values)) {
    const field = `values.${fieldId}`;
    const element = own.get(fieldId);
    const value = asText(raw);
    if (!element) problems.invalidField(field, 'not a field this signer fills');
    else if (kindOf(element).assetValue) problems.invalidField(field, `upload the image: POST ${imageFieldPath(fieldId)}`);
    else if (value === undefined) problems.invalidField(field, 'must be a string');
    else if ([...value].length > VALUE_MAX_CHARACTERS) problems.invalidField(field, `at most ${VALUE_MAX_CHARACTERS} characters`);
    else {
      const problem = value === '' ? null : valueProblem(element, value);
      if (problem) problems.invalidField(field, problem);
      else given.set(fieldId, value);
    }
  }
  const error = problems.toError();
  if (error) throw error;
  keepValues(signer, given, now);
}

/** The given values (an empty one clears its field) with the time they were filled. */
export function keepValues(signer: Signer, given: ReadonlyMap<string, string>, now: Date): void {
  signer.elements = signer.elements.map((element): StoredElement => {
    const value = given.get(element.field_id);
    if (value === undefined) return element;
    return { ...element, value: value === '' ? null : value, filled_at: value === '' ? null : now.toISOString() };
  });
}

/**
 * Before a signer's signature: each field they fill holds a value that keeps its rules, and every required one has
 * one (`400 missing_fields` or `bad_request`, naming `values.<field_id>`).
 */
export function assertFieldsComplete(signer: Signer): void {
  const problems = new Problems();
  for (const element of signerFilled(signer.elements)) {
    const field = `values.${element.field_id}`;
    if (element.value === null || element.value === '') {
      if (element.required) problems.missingField(field);
    } else if (!kindOf(element).assetValue) {
      const problem = valueProblem(element, element.value);
      if (problem) problems.invalidField(field, problem);
    }
  }
  const error = problems.toError();
  if (error) throw error;
}

/** At the signature: the values the service fills (date_signed: the signing time, kept as ISO 8601). */
export function fillServiceValues(signer: Signer, signedAt: Date): void {
  const time = signedAt.toISOString();
  signer.elements = signer.elements.map((element) =>
    kindOf(element).source === 'service' ? { ...element, value: time, filled_at: time } : element,
  );
}
