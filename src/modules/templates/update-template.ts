import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { Problems, isAbsent, text } from '../../platform/validation/problems';
import type { Actor } from '../../platform/auth/actor';
import { requestedDocuments } from '../esign';
import {
  checkElementsAgainstDocuments,
  checkTemplateName,
  documentRecords,
  ownDocuments,
  planBlueprints,
  savedDocuments,
} from './plan-template';
import { Template } from './template.entity';
import type { SaveTemplateInput } from './save-template';

/**
 * Changes what is given. `file_id` or `documents` (one of them) replaces the documents whole. New `signers`
 * replace the blueprint whole (every field_id is new); without them the saved signers stay, and must still fit new
 * documents. Each update is a new version: the row is locked for the update, so concurrent updates never give two
 * different blueprints the same version number.
 */
export async function updateTemplate(
  em: EntityManager,
  actor: Actor,
  input: SaveTemplateInput & { client_id?: string | null },
): Promise<Template> {
  if (!input.client_id) throw new AppError('bad_request', { errors: [{ field: 'client_id', problem: 'required' }] });
  const clientId = input.client_id;
  return em.transactional(async (tx) => {
    const template = await tx.findOne(
      Template,
      { id: clientId, user: actor.userId, deletedAt: null },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!template) throw new AppError('not_found', { errors: [{ field: 'client_id', problem: 'no such template' }] });
    const problems = new Problems();
    const name = input.name === undefined || input.name === null ? undefined : checkTemplateName(problems, input.name, true);
    const folder = text(problems, 'folder', input.folder, 200);
    const replacing = !isAbsent(input.file_id) || !isAbsent(input.documents);
    const requested = replacing ? requestedDocuments(problems, input) : savedDocuments(template);
    const early = problems.toError('bad_request');
    if (early) throw early;
    const documents = await ownDocuments(tx, actor, requested);
    const files = documents.map((document) => document.file);
    const signers = input.signers ? await planBlueprints(problems, tx, actor, input.signers, files) : undefined;
    if (!signers && replacing)
      checkElementsAgainstDocuments(
        problems,
        template.signers.map((s) => s.elements),
        files,
      );
    const error = problems.toError('bad_request');
    if (error) throw error;

    if (name !== undefined) template.name = name;
    if (input.folder !== undefined) template.folder = folder ?? undefined;
    template.file = files[0]!;
    template.documents = documentRecords(documents);
    template.version += 1;
    if (signers) template.signers = signers;
    template.updatedAt = new Date();
    await tx.flush();
    return template;
  });
}
