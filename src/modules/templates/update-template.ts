import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { Problems, text } from '../esign/validation';
import type { Actor } from '../users/access-tokens';
import { checkElementsAgainstFile, checkTemplateName, ownPdf, planBlueprints } from './plan-template';
import { getOwnTemplate } from './read-templates';
import type { Template } from './template.entity';
import type { SaveTemplateInput } from './save-template';

/**
 * Changes what is given. New `signers` replace the blueprint whole (every field_id is new); without them
 * the saved signers stay, and must still fit a new file. Each update is a new version.
 */
export async function updateTemplate(
  em: EntityManager,
  actor: Actor,
  input: SaveTemplateInput & { client_id?: string | null },
): Promise<Template> {
  if (!input.client_id) throw new AppError('bad_request', { errors: [{ field: 'client_id', problem: 'required' }] });
  const template = await getOwnTemplate(em, actor, input.client_id);
  const problems = new Problems();
  const name = input.name === undefined || input.name === null ? undefined : checkTemplateName(problems, input.name, true);
  const folder = text(problems, 'folder', input.folder, 200);
  const early = problems.toError('bad_request');
  if (early) throw early;
  const file = input.file_id ? await ownPdf(em, actor, input.file_id.trim()) : template.file;
  await em.populate(template, ['file']);
  const signers = input.signers ? await planBlueprints(problems, em, actor, input.signers, file) : undefined;
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
  await em.flush();
  return template;
}
