import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import {
  type EsignSession,
  publishSignerChange,
  type Signer,
  lockTurn,
  signerByToken,
  queueOneTimeCode,
} from '../../esign/signer-side';
import { assertCheckIsDue } from './checks';
import { SignerOtp, type OtpChannel } from './signer-otp.entity';
import { recipientOf } from './recipients';

/** The rules of email and mobile codes (docs/signing.md). */
export const ONE_TIME_CODE_RULES = {
  digits: 6,
  lifetimeSeconds: 600,
  attemptsPerCode: 5,
  resendAfterSeconds: 30,
  codesPerHour: 5,
} as const;

const hashCode = (secret: string, otpId: string, code: string) =>
  createHmac('sha256', secret).update(`${otpId}:${code}`).digest('hex');

const hashRecipient = (secret: string, channel: OtpChannel, address: string) =>
  createHmac('sha256', secret).update(`otp-recipient:${channel}:${address.toLowerCase()}`).digest('hex');

function parseChannel(value: unknown): OtpChannel {
  if (value === 'email' || value === 'mobile') return value;
  if (value === undefined || value === null) throw AppError.missingFields(['channel']);
  throw AppError.badRequest([{ field: 'channel', problem: 'email or mobile' }]);
}

/**
 * Sends the signer a fresh code for `channel` (the older one stops working). At most one code every
 * 30 seconds and five an hour per channel; delivery runs on the notification queue.
 */
export async function sendOneTimeCode(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { channel?: unknown },
  origin: RequestOrigin,
): Promise<{ channel: OtpChannel; sent_to: string; expires_at: Date; resend_after: Date }> {
  const found = await signerByToken(em, token);
  const channel = parseChannel(input.channel);
  return em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    assertCheckIsDue(signer, channel); // the check kinds `email` and `mobile` are the channels
    const recipient = recipientOf(signer, channel);
    const recipientHash = hashRecipient(services.config.secretsEncryptionKey, channel, recipient.to);
    const now = new Date();
    // The limits are per address: a person who takes over a signer's place is not held back by the former one's codes.
    const recent = await tx.find(
      SignerOtp,
      { signer, channel, recipientHash, createdAt: { $gt: new Date(now.getTime() - 3600_000) } },
      { orderBy: { createdAt: 'desc' } },
    );
    const resendAt = recent[0] && new Date(recent[0].createdAt.getTime() + ONE_TIME_CODE_RULES.resendAfterSeconds * 1000);
    if (resendAt && resendAt > now) throw tooManyRequests(resendAt, now, 'a code was sent moments ago');
    if (recent.length >= ONE_TIME_CODE_RULES.codesPerHour) {
      const oldest = recent[recent.length - 1];
      throw tooManyRequests(
        new Date(oldest.createdAt.getTime() + 3600_000),
        now,
        `at most ${ONE_TIME_CODE_RULES.codesPerHour} codes an hour`,
      );
    }
    for (const open of recent.filter((otp) => !otp.closedAt)) open.closedAt = now;

    const code = String(randomInt(0, 10 ** ONE_TIME_CODE_RULES.digits)).padStart(ONE_TIME_CODE_RULES.digits, '0');
    const otp = tx.create(SignerOtp, {
      signer,
      channel,
      codeHash: '',
      recipientHash,
      expiresAt: new Date(now.getTime() + ONE_TIME_CODE_RULES.lifetimeSeconds * 1000),
      createdAt: now,
    });
    otp.codeHash = hashCode(services.config.secretsEncryptionKey, otp.id, code);
    // The message and its delivery job are written in this transaction: a code is sent only if it was stored.
    await queueOneTimeCode(services, tx, { session, signer, channel, code, expiresAt: otp.expiresAt });
    recordAudit(tx, { session, signer, event: 'otp_sent', origin, details: { channel, sent_to: recipient.shown } });
    await tx.flush();
    return {
      channel,
      sent_to: recipient.shown,
      expires_at: otp.expiresAt,
      resend_after: new Date(now.getTime() + ONE_TIME_CODE_RULES.resendAfterSeconds * 1000),
    };
  });
}

function tooManyRequests(retryAt: Date, now: Date, why: string): AppError {
  const seconds = Math.max(1, Math.ceil((retryAt.getTime() - now.getTime()) / 1000));
  return new AppError('too_many_requests', { errors: [{ field: 'channel', problem: `${why}: try again in ${seconds} s` }] });
}

type VerifyOutcome = { ok: true } | { ok: false; error: AppError };

/**
 * Checks a code. A wrong code costs one of five attempts (kept even though the request fails); the
 * fifth closes the code, and the signer asks for a new one.
 */
export async function verifyOneTimeCode(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: { channel?: unknown; code?: unknown },
  origin: RequestOrigin,
): Promise<{ channel: OtpChannel; status: 'passed' }> {
  const found = await signerByToken(em, token);
  const channel = parseChannel(input.channel);
  if (input.code === undefined || input.code === null || input.code === '') throw AppError.missingFields(['code']);
  const code = typeof input.code === 'string' ? input.code.trim() : '';
  if (!/^\d{6}$/.test(code)) throw AppError.badRequest([{ field: 'code', problem: 'the 6-digit code that was sent' }]);

  const outcome: VerifyOutcome = await em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    assertCheckIsDue(signer, channel); // the check kinds `email` and `mobile` are the channels
    const now = new Date();
    // Only a code sent to the signer's present address: a former person's code (reassigned, delegated) is none.
    const recipientHash = hashRecipient(services.config.secretsEncryptionKey, channel, recipientOf(signer, channel).to);
    const otp = await tx.findOne(
      SignerOtp,
      { signer, channel, closedAt: null, recipientHash },
      { orderBy: { createdAt: 'desc' } },
    );
    if (!otp)
      return {
        ok: false,
        error: new AppError('otp_expired', { errors: [{ field: 'code', problem: 'no code is open: request a new one' }] }),
      };
    if (otp.expiresAt <= now) {
      otp.closedAt = now;
      recordAudit(tx, { session, signer, event: 'otp_failed', origin, details: { channel, reason: 'expired' } });
      return {
        ok: false,
        error: new AppError('otp_expired', { errors: [{ field: 'code', problem: 'the code has expired: request a new one' }] }),
      };
    }
    const expected = Buffer.from(otp.codeHash, 'hex');
    const given = Buffer.from(hashCode(services.config.secretsEncryptionKey, otp.id, code), 'hex');
    if (!timingSafeEqual(expected, given)) {
      otp.failedAttempts += 1;
      const left = ONE_TIME_CODE_RULES.attemptsPerCode - otp.failedAttempts;
      recordAudit(tx, {
        session,
        signer,
        event: 'otp_failed',
        origin,
        details: { channel, reason: 'wrong code', attempts_left: left },
      });
      if (left <= 0) {
        otp.closedAt = now;
        return {
          ok: false,
          error: new AppError('too_many_requests', {
            errors: [{ field: 'code', problem: 'too many wrong codes: request a new one' }],
          }),
        };
      }
      return {
        ok: false,
        error: new AppError('otp_invalid', { errors: [{ field: 'code', problem: `${left} attempt(s) left` }] }),
      };
    }
    otp.closedAt = now;
    if (channel === 'email') signer.emailVerifiedAt = now;
    else signer.mobileVerifiedAt = now;
    recordAudit(tx, { session, signer, event: 'otp_verified', origin, details: { channel } });
    await publishCheckProgress(services, tx, session, signer);
    return { ok: true };
  });
  if (!outcome.ok) throw outcome.error;
  return { channel, status: 'passed' };
}

/** Owners following a session see each check pass (the session subscription carries the signer's state). */
export async function publishCheckProgress(services: AppServices, tx: EntityManager, session: EsignSession, signer: Signer) {
  await tx.flush();
  await publishSignerChange(services, tx, session, signer);
}
