import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import {
  type DocumentPlan,
  type EsignSession,
  assetOf,
  createSession,
  kindOf,
  valueProblem,
  planSession,
  referencesOf,
  type ElementInput,
  type SessionPlan,
  type SessionReferences,
  type SessionRequest,
  type SignerInput,
} from '../esign';
import { Problems, isAbsent } from '../../platform/validation/problems';
import type { Actor } from '../../platform/auth/actor';
import { ownDocuments, savedDocuments } from './plan-template';
import { getOwnTemplate } from './read-templates';
import type { Template, TemplateSignerBlueprint } from './template.entity';
import type { TemplateRuntimeSignerInput } from './template.inputs';

export interface InitializeFromTemplateRequest extends Omit<SessionRequest, 'file_id' | 'documents' | 'signers'> {
  template_id?: string | null;
  signers?: TemplateRuntimeSignerInput[] | null;
}

/** Blueprint fields a runtime signer may override, field by field (runtime wins where it gives a value). */
const DEFAULT_FIELDS = [
  'sign_type',
  'auth_mode',
  'max_retry',
  'pfx_id',
  'reason',
  'verify_email',
  'verify_mobile',
  'accept_virtual_sign',
  'verify_location',
  'location_source',
  'language',
  'enforce_geofence',
  'latitude',
  'longitude',
  'radius',
] as const satisfies readonly (keyof TemplateSignerBlueprint & keyof SignerInput)[];

/**
 * The contract's five rules: equal signer counts; template defaults merged with runtime input, then the
 * very validation of initialize-esign (any failure is `bad_request`); email or mobile per signer;
 * `element_values` change values only; a signature value naming an asset survives only where the saved
 * element allows a wet signature.
 */
export async function initializeFromTemplate(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  request: InitializeFromTemplateRequest,
): Promise<EsignSession> {
  if (!request.template_id) throw AppError.badRequest([{ field: 'template_id', problem: 'required' }]);
  const prepared = await prepareTemplate(em, actor, request.template_id);
  const plan = await planFromTemplate(services, referencesOf(em, actor), prepared, request);
  return createSession(services, em, actor, plan, originOf(prepared));
}

/** A template read for starting sessions: the template, and its documents as they are now. */
export interface PreparedTemplate {
  template: Template;
  /** The template's documents, each still the owner's PDF, or why not (`404 not_found`). */
  documents: DocumentPlan[] | AppError;
}

/**
 * Reads the caller's template and its documents, once for any number of sessions (a bulk's rows). A template that
 * is not the caller's is `404 not_found`; a document that no longer is fails each session planned from it, after the
 * request's own signer count is checked, as initialize-from-template answers.
 */
export async function prepareTemplate(em: EntityManager, actor: Actor, templateId: string): Promise<PreparedTemplate> {
  const template = await getOwnTemplate(em, actor, templateId);
  try {
    return { template, documents: await ownDocuments(em, actor, savedDocuments(template)) };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { template, documents: error };
  }
}

/** Where a session planned from the template says it came from. */
export function originOf({ template }: PreparedTemplate): { template: Template; version: number } {
  return { template, version: template.version };
}

/** Plans one session from a prepared template and a request's runtime input (rules 1 to 5). */
export async function planFromTemplate(
  services: AppServices,
  references: SessionReferences,
  { template, documents }: PreparedTemplate,
  request: InitializeFromTemplateRequest,
): Promise<SessionPlan> {
  const runtime = request.signers ?? [];
  if (runtime.length !== template.signers.length) {
    throw new AppError('signer_count_mismatch', {
      errors: [{ field: 'signers', problem: `the template has ${template.signers.length} signer(s); ${runtime.length} given` }],
    });
  }
  // Every document must still be the caller's PDF (`404 not_found` otherwise), as for the template's own file.
  if (documents instanceof AppError) throw documents;

  const problems = new Problems();
  const signers = template.signers.map((blueprint, index) =>
    mergeSigner(problems, `signers[${index}]`, blueprint, runtime[index]),
  );
  const mergeError = problems.toError('bad_request');
  if (mergeError) throw mergeError;

  const merged: SessionRequest = {
    ...request,
    // The template's documents, in order, by the names it saved (one document: what `file_id` alone would start).
    documents: documents.map((document) => ({ file_id: document.file.id, name: document.name })),
    // Without a session-level sign type, the first saved signer's stands for the session.
    sign_type: isAbsent(request.sign_type) ? (template.signers[0]?.sign_type ?? null) : request.sign_type,
    folder: isAbsent(request.folder) ? (template.folder ?? null) : request.folder,
    signers,
  };
  try {
    return await planSession(references, merged, services.config);
  } catch (error) {
    if (error instanceof AppError && error.status === 400)
      throw new AppError('bad_request', { errors: error.errors, cause: error });
    throw error;
  }
}

function mergeSigner(
  problems: Problems,
  field: string,
  blueprint: TemplateSignerBlueprint,
  runtime: TemplateRuntimeSignerInput,
): SignerInput {
  if (runtime.elements != null) {
    problems.invalidField(`${field}.elements`, 'elements come from the template; set their values with element_values');
  }
  if (isAbsent(runtime.email) && isAbsent(runtime.mobile)) problems.invalidField(`${field}.email`, 'email or mobile is required');
  if (isAbsent(runtime.reason) && isAbsent(blueprint.reason))
    problems.invalidField(`${field}.reason`, 'required unless saved in the template');

  const values = runtime.element_values ?? {};
  const fieldIds = new Set(blueprint.elements.map((element) => element.field_id));
  for (const [fieldId, value] of Object.entries(values)) {
    if (!fieldIds.has(fieldId))
      problems.invalidField(`${field}.element_values.${fieldId}`, 'not a field_id of this template signer');
    else if (typeof value !== 'string') problems.invalidField(`${field}.element_values.${fieldId}`, 'must be a string');
  }
  for (const element of blueprint.elements) {
    const given = values[element.field_id];
    if (typeof given !== 'string') continue;
    // Rule 4: the value only; each kind's rules hold for it as for a value given at initialize-esign.
    const kind = kindOf(element);
    const problem =
      kind.source === 'service'
        ? `a ${kind.type} element is filled by the service when its signer signs`
        : kind.widget && !kind.assetValue
          ? valueProblem(element, given.trim())
          : null;
    if (problem) problems.invalidField(`${field}.element_values.${element.field_id}`, problem);
  }
  const elements = blueprint.elements.map((element): ElementInput & { field_id: string } => {
    const given = values[element.field_id];
    let value = typeof given === 'string' ? given : element.value;
    // Rule 5: a signature's wet-signature image survives only with allow_wet_signature.
    if (kindOf(element).source === 'signature' && assetOf({ ...element, value }) && !element.allow_wet_signature) value = null;
    return { ...element, value };
  });

  // A blank runtime string counts as absent (as everywhere else), so it never hides the template's value.
  const defaults = Object.fromEntries(DEFAULT_FIELDS.map((key) => [key, isAbsent(runtime[key]) ? blueprint[key] : runtime[key]]));
  const { element_values: _values, ...identity } = runtime;
  return { ...identity, ...defaults, elements };
}
