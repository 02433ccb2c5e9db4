import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../../platform/auth/actor';
import type { AppServices } from '../../../platform/services';
import { Problems, text } from '../../../platform/validation/problems';
import { recordAudit, type RequestOrigin } from '../../audit';
import { EsignSession, type Signer } from '../esign-session.entity';
import { planContact } from './contact';
import { actOnPendingSigner } from './owner-signer-action';
import { publishSignerChange, recordSessionWebhook } from '../session-events';
import { queueInvite } from './signer-messages';
import { isSignersTurn } from './signer-turn';
import { newSignerToken, signerTokenBox } from './signer-token';

export interface ReassignInput {
  client_id?: string | null;
  signer_id?: string | null;
  full_name?: string | null;
  email?: string | null;
  mobile?: string | null;
  country_code?: string | null;
}

/**
 * The new person's name and contact, checked as initialize-esign checks a signer's (planContact). The contact is the
 * new person's whole: an email or a mobile must be given, and nothing of the former person's contact is kept (their
 * invite and one-time codes would go to the person who left). The name is kept when not given (a reassignment may
 * only move the place to another address of the same person).
 */
function planNewPerson(signer: Signer, input: ReassignInput, from: 'owner' | 'delegator') {
  const problems = new Problems();
  const fullName = text(problems, 'full_name', input.full_name, 200) ?? signer.fullName;
  const { email, mobile, countryCode } = planContact(problems, '', input);
  if (email === undefined && mobile === undefined) {
    problems.invalidField('email', 'give the new person’s email or mobile (the contact is replaced whole)');
  }
  if (signer.verifyEmail && email === undefined) problems.missingField('email');
  if (signer.verifyMobile && mobile === undefined) problems.missingField('mobile');
  const code = countryCode?.replace(/^\+/, '');
  if (from === 'delegator') {
    // A delegate reached at the delegator's own address would get the delegator's invite and codes.
    if (email !== undefined && email.toLowerCase() === signer.email?.toLowerCase())
      problems.invalidField('email', 'must be the delegate’s, not yours');
    if (mobile !== undefined && mobile === signer.mobile && code === signer.countryCode)
      problems.invalidField('mobile', 'must be the delegate’s, not yours');
  }
  const refused = problems.toError();
  if (refused) throw refused;
  return { fullName, email, mobile, countryCode: code };
}

/**
 * Gives a pending signer's place to another person, in the caller's transaction with the session row locked: new
 * name and contact, a new signer token (the old invite link answers 401 at once), the checks that proved the old
 * person's email, mobile, location and face start again, an invite goes to the new person if it is their turn, and
 * the audit trail keeps who was replaced by whom and who did it. The owner does it (reassign-signer); a signer does
 * it for themselves when the session allows delegation.
 */
export async function handOverSigner(
  services: AppServices,
  tx: EntityManager,
  input: {
    session: EsignSession;
    signer: Signer;
    contact: ReassignInput;
    event: 'signer_reassigned' | 'signer_delegated';
    by: string;
    origin?: RequestOrigin;
  },
): Promise<void> {
  const { session, signer } = input;
  const contact = planNewPerson(signer, input.contact, input.event === 'signer_delegated' ? 'delegator' : 'owner');
  const before = { full_name: signer.fullName, email: signer.email ?? null, mobile: signer.mobile ?? null };
  const { token, hash } = newSignerToken();
  signer.tokenHash = hash;
  signer.tokenSealed = signerTokenBox(services.config.secretsEncryptionKey).seal(token);
  signer.fullName = contact.fullName;
  signer.email = contact.email;
  signer.mobile = contact.mobile;
  signer.countryCode = contact.countryCode;
  // What the old person proved is not the new person's.
  signer.emailVerifiedAt = undefined;
  signer.mobileVerifiedAt = undefined;
  signer.location = undefined;
  signer.faceAttempts = 0;
  signer.failedAttempts = 0;
  signer.invitedAt = undefined;
  recordAudit(tx, {
    session,
    signer,
    event: input.event,
    origin: input.origin,
    details: {
      by: input.by,
      before,
      after: { full_name: contact.fullName, email: contact.email ?? null, mobile: contact.mobile ?? null },
    },
  });
  await tx.flush();
  // The owner who reassigns holds the new link in the answer, and invites follow the signer's `notification.invite`
  // as they did: an owner who hands out links keeps doing so. A delegate was named by the signer, not the owner, so
  // is invited whatever that flag says: nobody else would tell them.
  const delegated = input.event === 'signer_delegated';
  if (isSignersTurn(session, signer)) await queueInvite(services, tx, session, signer, { byHand: delegated });
  await tx.flush();
  await publishSignerChange(services, tx, session, signer);
  // The owner learns the new person and link (the event's data is the session, with the signer's new invite_url).
  await recordSessionWebhook(
    services,
    tx,
    { id: session.id, userId: session.user.id },
    delegated ? 'esign.signer.delegated' : 'esign.signer.reassigned',
    signer.id,
  );
}

/** The owner hands a pending signer's place to another person before that signer has signed (handOverSigner). */
export async function reassignSigner(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  input: ReassignInput,
  origin?: RequestOrigin,
): Promise<EsignSession> {
  const sessionId = await actOnPendingSigner(services, em, actor, input, async (tx, { session, signer }) => {
    await handOverSigner(services, tx, { session, signer, contact: input, event: 'signer_reassigned', by: actor.userId, origin });
    return session.id;
  });
  return em.findOneOrFail(EsignSession, { id: sessionId }, { refresh: true });
}
