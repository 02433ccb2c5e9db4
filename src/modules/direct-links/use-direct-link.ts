import type { Actor } from '../../platform/auth/actor';
import type { RequestOrigin } from '../../platform/auth/request-origin';
import { AppError } from '../../platform/errors';
import { takeRequest } from '../../platform/rate-limit/enforce';
import type { AppServices } from '../../platform/services';
import { recordAudit } from '../audit';
import { createSession, referencesOf, signerInviteUrl, Signer } from '../esign';
import { originOf, planFromTemplate, prepareTemplate } from '../templates';
import { recordWebhookEvent } from '../webhooks';
import { DirectLink } from './direct-link.entity';
import { linkRequest, type DirectLinkOptions, type VisitorContact } from './link-request';

/** Sessions one address may start through one link: this many an hour (docs/direct-links.md). */
export const VISITS_PER_HOUR = 5;

/** What an unknown, disabled, expired or used-up link answers: all alike, so a link's state is not told. */
export const linkUnavailable = () => new AppError('not_found', { message: 'This link is not available.' });

/** The link of `slug` while it may start a session, or null. */
export async function usableLink(services: AppServices, slug: string): Promise<DirectLink | null> {
  const link = await services.orm.em.fork().findOne(DirectLink, { slug });
  if (!link || !link.enabled) return null;
  if (link.expiresAt && link.expiresAt <= new Date()) return null;
  if (link.maxUses != null && link.uses >= link.maxUses) return null;
  return link;
}

/**
 * A visitor of a template's public link (docs/direct-links.md): their contact is checked as initialize-from-template
 * checks a signer's, a session is made from the template for them (stamps reserved from the owner's inventory,
 * `422 stamp_combination_not_found` when there are none), and they go on to sign it. The use is counted in the
 * session's transaction (a link's use limit holds under racing visitors), recorded in the session's audit trail with
 * the visitor's address, and told to the owner (`esign.direct_link.used`). Answers the visitor's signing page.
 */
export async function startFromDirectLink(
  services: AppServices,
  slug: string,
  visitor: VisitorContact,
  origin: RequestOrigin,
): Promise<{ sessionId: string; inviteUrl: string }> {
  const link = await usableLink(services, slug);
  if (!link) throw linkUnavailable();
  const em = services.orm.em.fork();
  // The link acts for its owner, as the owner's own initialize-from-template would.
  const actor: Actor = { userId: link.user.id, tokenId: `direct_link:${link.id}` };
  const prepared = await prepareTemplate(em, actor, link.template.id).catch(() => {
    throw linkUnavailable(); // the template was deleted since
  });
  const options = link.options as DirectLinkOptions;
  const plan = await planFromTemplate(
    services,
    referencesOf(em, actor),
    prepared,
    linkRequest(prepared.template, options, visitor),
  );
  // Counted once the visit would start a session: a visitor who mistypes an address is not turned away for it.
  takeRequest(
    services.rateLimiter,
    { name: 'direct_link', limit: VISITS_PER_HOUR, windowSeconds: 3600 },
    `${link.id}:${origin.ip ?? 'unknown'}`,
  );
  return em.transactional(async (tx) => {
    const claimed = await tx.getConnection().execute<{ uses: number }[]>(
      `update direct_links set uses = uses + 1
        where id = ? and enabled and (max_uses is null or uses < max_uses) and (expires_at is null or expires_at > now())
        returning uses`,
      [link.id],
      'all',
      tx.getTransactionContext(),
    );
    if (claimed.length === 0) throw linkUnavailable();
    const session = await createSession(services, tx, actor, plan, originOf(prepared));
    const position = options.visitor_position ?? 0;
    const signer = await tx.findOneOrFail(Signer, { session: session.id, position });
    recordAudit(tx, {
      session,
      signer,
      event: 'direct_link_used',
      origin,
      details: { direct_link_id: link.id, template_id: prepared.template.id, use: claimed[0]!.uses },
    });
    await tx.flush();
    await recordWebhookEvent(services, tx, {
      userId: actor.userId,
      type: 'esign.direct_link.used',
      resourceId: session.id,
      read: { operation: 'Query.esignSession', variables: { client_id: session.id } },
      attributes: { direct_link_id: link.id, signer_id: signer.id },
    });
    return { sessionId: session.id, inviteUrl: signerInviteUrl(services.config, signer) };
  });
}
