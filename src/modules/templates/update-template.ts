import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { Problems, text } from '../../platform/validation/problems';
import type { Actor } from '../../platform/auth/actor';
import { checkElementsAgainstFile, checkTemplateName, ownPdf, planBlueprints } from './plan-template';
import { Template } from './template.entity';
import type { SaveTemplateInput } from './save-template';

/**
 * Changes what is given. New `signers` replace the blueprint whole (every field_id is new); without them
 * the saved signers stay, and must still fit a new file. Each update is a new version: the row is locked
 * for the update, so concurrent updates never give two different blueprints the same version number.
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
    const early = problems.toError('bad_request');
    if (early) throw early;
    const file = input.file_id ? await ownPdf(tx, actor, input.file_id.trim()) : template.file;
    await tx.populate(template, ['file']);
    const signers = input.signers ? await planBlueprints(problems, tx, actor, input.signers, file) : undefined;
    if (!signers && file.id !== template.file.id)
      checkElementsAgainstFile(
        problems,
        template.signers.map((s) => s.elements),
        file,
      );
    const error = problems.toError('bad_request');
    if (error) throw error;

    if (name !== undefined) template.name = name;
    if (input.folder !== undefined) template.folder = folder ?? undefined;
    template.file = file;
    if (signers) template.signers = signers;
    template.version += 1;
    template.updatedAt = new Date();
    await tx.flush();
    return template;
  });
}
