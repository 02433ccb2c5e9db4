import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { AUTH_MODES, LIMITS, SIGN_TYPES, assetOf, checkLocation, planElements, type StoredElement } from '../esign';
import { Problems, isAbsent, oneOf, text, wholeNumber } from '../../platform/validation/problems';
import { StoredFile } from '../files';
import type { Actor } from '../../platform/auth/actor';
import type { TemplateSignerBlueprint } from './template.entity';
import type { TemplateSignerInput } from './template.inputs';

const RUNTIME_ONLY = ['name_match', 'face_ref_file_id', 'face_match_threshold', 'face_max_attempts', 'notification'] as const;

/** The caller's PDF, or `404 not_found` as the contract says for templates. */
export async function ownPdf(em: EntityManager, actor: Actor, fileId: string): Promise<StoredFile> {
  const file = await em.findOne(StoredFile, { id: fileId, user: actor.userId, kind: 'pdf' });
  if (!file) throw new AppError('not_found', { errors: [{ field: 'file_id', problem: 'no such PDF among your files' }] });
  return file;
}

export function checkTemplateName(problems: Problems, name: string | null | undefined, required: boolean): string | undefined {
  return text(problems, 'name', name, 200, required);
}

/** Validates signer blueprints against their file; every failure is `400 bad_request`, all listed at once. */
export async function planBlueprints(
  problems: Problems,
  em: EntityManager,
  actor: Actor,
  input: TemplateSignerInput[] | null | undefined,
  file: StoredFile,
): Promise<TemplateSignerBlueprint[]> {
  const signers = input ?? [];
  if (signers.length === 0) problems.missingField('signers');
  if (signers.length > LIMITS.signers.max) problems.invalidField('signers', `at most ${LIMITS.signers.max} signers`);
  const blueprints = signers.map((signer, index) => planBlueprint(problems, `signers[${index}]`, signer));
  checkElementsAgainstFile(
    problems,
    blueprints.map((blueprint) => blueprint.elements),
    file,
  );

  // As in initialize-esign: an image's value, and any file_... value, must be one of the caller's assets.
  const assetIds = new Set(blueprints.flatMap((b) => b.elements.flatMap((e) => assetOf(e) ?? [])));
  if (assetIds.size > 0) {
    const owned = new Set((await em.find(StoredFile, { id: [...assetIds], user: actor.userId, kind: 'asset' })).map((f) => f.id));
    blueprints.forEach((blueprint, index) =>
      blueprint.elements.forEach((element, elementIndex) => {
        const asset = assetOf(element);
        if (asset && !owned.has(asset)) {
          problems.invalidField(
            `signers[${index}].elements[${elementIndex}].value`,
            'must be the client_id of one of your uploaded assets',
          );
        }
      }),
    );
  }
  return blueprints;
}

/** Pages are zero-based and must exist in the template's file (also when an update changes the file). */
export function checkElementsAgainstFile(problems: Problems, elementsBySigner: StoredElement[][], file: StoredFile): void {
  const pages = file.pageCount ?? 0;
  elementsBySigner.forEach((elements, index) =>
    elements.forEach((element, elementIndex) => {
      if (element.page >= pages) {
        problems.invalidField(
          `signers[${index}].elements[${elementIndex}].page`,
          `the PDF has ${pages} page(s): pages are 0 to ${pages - 1}`,
        );
      }
    }),
  );
}

function planBlueprint(problems: Problems, field: string, input: TemplateSignerInput): TemplateSignerBlueprint {
  for (const option of RUNTIME_ONLY) {
    if (!isAbsent(input[option]))
      problems.invalidField(`${field}.${option}`, 'runtime-only: give it in initialize-from-template, not in a template');
  }
  const signType = oneOf(problems, `${field}.sign_type`, input.sign_type, SIGN_TYPES) ?? null;
  const pfxId = text(problems, `${field}.pfx_id`, input.pfx_id, 64) ?? null;
  if (pfxId !== null && !pfxId.startsWith('pfx_')) problems.invalidField(`${field}.pfx_id`, 'must be a pfx_... identifier');
  if (signType === 'pfx' && pfxId === null) problems.invalidField(`${field}.pfx_id`, 'required when the signer signs with pfx');
  const locationSource = checkLocation(problems, field, input) ?? null;
  return {
    sign_type: signType,
    auth_mode: oneOf(problems, `${field}.auth_mode`, input.auth_mode, AUTH_MODES) ?? null,
    max_retry: wholeNumber(problems, `${field}.max_retry`, input.max_retry, LIMITS.maxRetry) ?? null,
    pfx_id: pfxId,
    reason: text(problems, `${field}.reason`, input.reason, 500) ?? null,
    verify_email: input.verify_email ?? null,
    verify_mobile: input.verify_mobile ?? null,
    accept_virtual_sign: input.accept_virtual_sign ?? null,
    verify_location: input.verify_location ?? null,
    location_source: locationSource,
    enforce_geofence: input.enforce_geofence ?? null,
    latitude: input.latitude ?? null,
    longitude: input.longitude ?? null,
    radius: input.radius ?? null,
    // A template signer always places a signature; image values may come at runtime (element_values).
    elements: planElements(problems, field, input.elements, { requireSignature: true, requireValues: false }),
  };
}
