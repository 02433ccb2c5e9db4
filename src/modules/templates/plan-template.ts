import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import {
  AUTH_MODES,
  LIMITS,
  SIGN_TYPES,
  assetOf,
  checkLanguage,
  checkLocation,
  documentIndex,
  planElements,
  type DocumentPlan,
  type RequestedDocument,
  type StoredElement,
} from '../esign';
import { Problems, isAbsent, oneOf, text, wholeNumber } from '../../platform/validation/problems';
import { StoredFile } from '../files';
import type { Actor } from '../../platform/auth/actor';
import type { Template, TemplateDocumentRecord, TemplateSignerBlueprint } from './template.entity';
import type { TemplateSignerInput } from './template.inputs';

const RUNTIME_ONLY = [
  'name_match',
  'face_ref_file_id',
  'face_match_threshold',
  'face_max_attempts',
  'notification',
  'dsc_certificate',
] as const;

/**
 * The documents asked for, each one of the caller's PDFs, named as given or by its upload's name; any that is not
 * is `404 not_found` naming where it was asked for (`file_id`, `documents[2].file_id`), as the contract says for
 * templates.
 */
export async function ownDocuments(em: EntityManager, actor: Actor, requested: RequestedDocument[]): Promise<DocumentPlan[]> {
  const ids = [...new Set(requested.map((document) => document.fileId))];
  const files = new Map(
    (await em.find(StoredFile, { id: ids, user: actor.userId, kind: 'pdf' })).map((file) => [file.id, file] as const),
  );
  const missing = requested.filter((document) => !files.has(document.fileId));
  if (missing.length > 0)
    throw new AppError('not_found', {
      errors: missing.map((document) => ({ field: document.field, problem: 'no such PDF among your files' })),
    });
  return requested.map((document) => {
    const file = files.get(document.fileId)!;
    return { file, name: document.name ?? file.name };
  });
}

/** A saved template's documents, as a request would name them (`file_id` when there is one). */
export function savedDocuments(template: Pick<Template, 'documents'>): RequestedDocument[] {
  const { documents } = template;
  return documents.map((document, index) => ({
    fileId: document.file_id,
    name: document.name,
    field: documents.length === 1 ? 'file_id' : `documents[${index}].file_id`,
  }));
}

/** How a template stores its planned documents. */
export function documentRecords(documents: DocumentPlan[]): TemplateDocumentRecord[] {
  return documents.map((document) => ({ file_id: document.file.id, name: document.name }));
}

export function checkTemplateName(problems: Problems, name: string | null | undefined, required: boolean): string | undefined {
  return text(problems, 'name', name, 200, required);
}

/** Validates signer blueprints against their documents; every failure is `400 bad_request`, all listed at once. */
export async function planBlueprints(
  problems: Problems,
  em: EntityManager,
  actor: Actor,
  input: TemplateSignerInput[] | null | undefined,
  files: StoredFile[],
): Promise<TemplateSignerBlueprint[]> {
  const signers = input ?? [];
  if (signers.length === 0) problems.missingField('signers');
  if (signers.length > LIMITS.signers.max) problems.invalidField('signers', `at most ${LIMITS.signers.max} signers`);
  const blueprints = signers.map((signer, index) => planBlueprint(problems, `signers[${index}]`, signer));
  checkElementsAgainstDocuments(
    problems,
    blueprints.map((blueprint) => blueprint.elements),
    files,
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

/**
 * Each element's `document` must be one of the template's documents and its zero-based page must exist in that
 * document's PDF (also when an update changes the documents), in the words initialize-esign uses.
 */
export function checkElementsAgainstDocuments(
  problems: Problems,
  elementsBySigner: StoredElement[][],
  files: StoredFile[],
): void {
  elementsBySigner.forEach((elements, index) =>
    elements.forEach((element, elementIndex) => {
      const at = `signers[${index}].elements[${elementIndex}]`;
      const on = documentIndex(problems, `${at}.document`, element.document, files.length);
      if (on === undefined) return;
      const pages = files[on]?.pageCount ?? 0;
      if (element.page >= pages) problems.invalidField(`${at}.page`, `the PDF has ${pages} page(s): pages are 0 to ${pages - 1}`);
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
    language: checkLanguage(problems, field, input.language) ?? null,
    enforce_geofence: input.enforce_geofence ?? null,
    latitude: input.latitude ?? null,
    longitude: input.longitude ?? null,
    radius: input.radius ?? null,
    // A template signer always places a signature; image values may come at runtime (element_values).
    elements: planElements(problems, field, input.elements, { requireSignature: true, requireValues: false }),
  };
}
