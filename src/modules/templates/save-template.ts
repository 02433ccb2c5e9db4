import type { EntityManager } from '@mikro-orm/postgresql';
import { Problems, text } from '../../platform/validation/problems';
import type { Actor } from '../../platform/auth/actor';
import { User } from '../users';
import { checkTemplateName, ownPdf, planBlueprints } from './plan-template';
import { Template } from './template.entity';
import type { TemplateSignerInput } from './template.inputs';

export interface SaveTemplateInput {
  name?: string | null;
  file_id?: string | null;
  folder?: string | null;
  signers?: TemplateSignerInput[] | null;
}

export async function saveTemplate(em: EntityManager, actor: Actor, input: SaveTemplateInput): Promise<Template> {
  const problems = new Problems();
  const name = checkTemplateName(problems, input.name, true);
  const folder = text(problems, 'folder', input.folder, 200);
  if (!input.file_id?.trim()) problems.missingField('file_id');
  const early = problems.toError('bad_request');
  if (early) throw early;
  const file = await ownPdf(em, actor, input.file_id!.trim());
  const signers = await planBlueprints(problems, em, actor, input.signers, file);
  const error = problems.toError('bad_request');
  if (error) throw error;
  const template = em.create(Template, { user: em.getReference(User, actor.userId), name: name!, file, folder, signers });
  await em.persistAndFlush(template);
  return template;
}
