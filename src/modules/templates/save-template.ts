import type { EntityManager } from '@mikro-orm/postgresql';
import { Problems, text } from '../../platform/validation/problems';
import type { Actor } from '../../platform/auth/actor';
import { requestedDocuments, type DocumentInput } from '../esign';
import { User } from '../users';
import { checkTemplateName, documentRecords, ownDocuments, planBlueprints } from './plan-template';
import { Template } from './template.entity';
import type { TemplateSignerInput } from './template.inputs';

export interface SaveTemplateInput {
  name?: string | null;
  /** One PDF: a template of one document. */
  file_id?: string | null;
  /** Instead of `file_id`: the template's documents, in order (the session rules and limit). */
  documents?: DocumentInput[] | null;
  folder?: string | null;
  signers?: TemplateSignerInput[] | null;
}

export async function saveTemplate(em: EntityManager, actor: Actor, input: SaveTemplateInput): Promise<Template> {
  const problems = new Problems();
  const name = checkTemplateName(problems, input.name, true);
  const folder = text(problems, 'folder', input.folder, 200);
  const requested = requestedDocuments(problems, input);
  const early = problems.toError('bad_request');
  if (early) throw early;
  const documents = await ownDocuments(em, actor, requested);
  const files = documents.map((document) => document.file);
  const signers = await planBlueprints(problems, em, actor, input.signers, files);
  const error = problems.toError('bad_request');
  if (error) throw error;
  const template = em.create(Template, {
    user: em.getReference(User, actor.userId),
    name: name!,
    file: files[0]!,
    documents: documentRecords(documents),
    folder,
    signers,
  });
  await em.persistAndFlush(template);
  return template;
}
