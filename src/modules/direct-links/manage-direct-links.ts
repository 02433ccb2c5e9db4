import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor';
import { AppError } from '../../platform/errors';
import type { AppServices } from '../../platform/services';
import { Problems, isAbsent, wholeNumber } from '../../platform/validation/problems';
import { referencesOf } from '../esign';
import { getOwnTemplate, planFromTemplate, prepareTemplate } from '../templates';
import { User } from '../users';
import { DirectLink } from './direct-link.entity';
import { linkRequest, type DirectLinkOptions, type VisitorContact } from './link-request';

export const DIRECT_LINK_PATH = '/d';

export interface SetDirectLinkRequest extends DirectLinkOptions {
  template_id?: string | null;
  enabled?: boolean | null;
  expires_at?: Date | null;
  max_uses?: number | null;
}

/** A contact that passes every check, standing in for the visitors while the link's own options are checked. */
const SAMPLE_VISITOR: VisitorContact = { full_name: 'Sample Visitor', email: 'visitor@example.com' };

/**
 * Turns a template's public link on or off and sets what its sessions get (docs/direct-links.md). The options are
 * checked at once, by planning a session for a sample visitor exactly as initialize-from-template would: a link that
 * is on always makes sessions, unless its stamps run out. The link's address stays the same across changes.
 */
export async function setDirectLink(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  request: SetDirectLinkRequest,
): Promise<DirectLink> {
  if (isAbsent(request.template_id)) throw AppError.missingFields(['template_id']);
  const problems = new Problems();
  if (typeof request.enabled !== 'boolean') problems.missingField('enabled');
  const maxUses = wholeNumber(problems, 'max_uses', request.max_uses, { min: 1, max: 1_000_000 });
  if (request.expires_at && request.expires_at.getTime() <= Date.now())
    problems.invalidField('expires_at', 'must be in the future');
  const error = problems.toError();
  if (error) throw error;
  const prepared = await prepareTemplate(em, actor, request.template_id!);
  const { template } = prepared;
  const options: DirectLinkOptions = {
    visitor_position: request.visitor_position ?? 0,
    visitor_reason: request.visitor_reason ?? null,
    signers: request.signers ?? [],
    sign_type: request.sign_type ?? null,
    expiry_seconds: request.expiry_seconds ?? null,
    redirect_url: request.redirect_url ?? null,
    folder: request.folder ?? null,
    stamp: request.stamp ?? null,
  };
  await planFromTemplate(services, referencesOf(em, actor), prepared, linkRequest(template, options, SAMPLE_VISITOR)).catch(
    (error: unknown) => {
      throw error instanceof AppError ? inLinkTerms(error, options.visitor_position ?? 0) : error;
    },
  );
  let link = await em.findOne(DirectLink, { template: template.id });
  if (!link) {
    link = em.create(DirectLink, {
      user: em.getReference(User, actor.userId),
      template: em.getReference<{ id: string }>('Template', template.id),
      slug: randomBytes(16).toString('base64url'),
      enabled: request.enabled!,
      options: options as Record<string, unknown>,
    });
  }
  link.enabled = request.enabled!;
  link.expiresAt = request.expires_at ?? null;
  link.maxUses = maxUses ?? null;
  link.options = options as Record<string, unknown>;
  await em.flush();
  return link;
}

/** The template's link, or 404 when it has none (or the template is not the caller's). */
export async function getDirectLink(em: EntityManager, actor: Actor, templateId: string | null | undefined): Promise<DirectLink> {
  if (isAbsent(templateId)) throw AppError.missingFields(['template_id']);
  const template = await getOwnTemplate(em, actor, templateId!);
  const link = await em.findOne(DirectLink, { template: template.id });
  if (!link) throw new AppError('not_found', { errors: [{ field: 'template_id', problem: 'the template has no direct link' }] });
  return link;
}

export const directLinkUrl = (publicUrl: string, link: { slug: string }) => `${publicUrl}${DIRECT_LINK_PATH}/${link.slug}`;

/**
 * A refusal of the sample session, naming the link's own fields: the visitor's place is `visitor_reason` (or
 * `visitor_position`), and the other signers are counted without it (`signers[1]` of the session after the visitor is
 * the link's `signers[0]`).
 */
function inLinkTerms(error: AppError, position: number): AppError {
  if (!error.errors) return error;
  const errors = error.errors.map((problem) => {
    const match = /^signers\[(\d+)\](.*)$/.exec(problem.field);
    if (!match) return problem;
    const index = Number(match[1]);
    if (index === position)
      return { ...problem, field: match[2] === '.reason' ? 'visitor_reason' : `visitor_position${match[2]}` };
    return { ...problem, field: `signers[${index > position ? index - 1 : index}]${match[2]}` };
  });
  return new AppError(error.code, { message: error.message, errors, details: error.details, cause: error });
}
