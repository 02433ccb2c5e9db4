import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../../platform/auth/actor';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import { actOnPendingSigner } from './owner-signer-action';
import { isSignersTurn } from './signer-turn';
import { queueInvite } from './signer-messages';

/** Resends per signer and hour: enough to fix a lost email, too few to flood anyone's inbox. */
export const RESENDS_PER_HOUR = 3;

export interface ResentInvite {
  client_id: string;
  signer_id: string;
  /** One per channel the invite went to (email, WhatsApp, or SMS when neither). */
  messages: number;
  resends_left_this_hour: number;
}

/**
 * The owner sends a signer's invite again, by hand: only to the signer whose turn it is, in a pending session, at
 * most RESENDS_PER_HOUR times an hour per signer (`429 rate_limited` beyond, counted from the audit trail, so every
 * process of the service agrees). Each resend is in the audit trail with who asked.
 */
export async function resendInvite(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  input: { client_id?: string | null; signer_id?: string | null },
  origin?: RequestOrigin,
): Promise<ResentInvite> {
  return actOnPendingSigner(services, em, actor, input, async (tx, { session, signer, refuse }) => {
    if (!isSignersTurn(session, signer)) {
      throw refuse('it is not this signer’s turn yet: their invite goes out when it comes');
    }
    const [recent] = await tx.getConnection().execute<{ n: number; oldest: Date | null }[]>(
      `select count(*)::int as n, min(at) as oldest from esign_audit_events
          where signer_id = ? and event = 'invite_resent' and at > now() - interval '1 hour'`,
      [signer.id],
      'all',
      tx.getTransactionContext(),
    );
    if (recent.n >= RESENDS_PER_HOUR) {
      const retryAfter = Math.max(1, Math.ceil((new Date(recent.oldest!).getTime() + 3_600_000 - Date.now()) / 1000));
      throw new AppError('rate_limited', {
        errors: [
          { field: 'signer_id', problem: `at most ${RESENDS_PER_HOUR} resends an hour per signer; retry in ${retryAfter} s` },
        ],
        details: { limit: RESENDS_PER_HOUR, window_seconds: 3600, retry_after: retryAfter },
      });
    }
    const queued = await queueInvite(services, tx, session, signer, { byHand: true });
    if (queued.length === 0) {
      throw new AppError('bad_request', {
        errors: [{ field: 'signer_id', problem: 'the signer has no email or mobile number to send the invite to' }],
      });
    }
    recordAudit(tx, { session, signer, event: 'invite_resent', origin, details: { by: actor.userId, messages: queued.length } });
    await tx.flush();
    return {
      client_id: session.id,
      signer_id: signer.id,
      messages: queued.length,
      resends_left_this_hour: RESENDS_PER_HOUR - recent.n - 1,
    };
  });
}
