import express, { type NextFunction, type Request, type Response } from 'express';
import { pipeline } from 'node:stream/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { bearerTokenOf } from '../../platform/auth/bearer';
import { AppError } from '../../platform/errors';
import { ratePolicies, signerCaller, takeRequest } from '../../platform/rate-limit/enforce';
import { findControlCharacters } from '../../platform/validation/text';
import { sendSuccess } from '../../platform/rest/envelope';
import type { AppServices } from '../../platform/services';
import { recordAudit, requestOrigin } from '../audit';
import { EsignSession, positionsOf, Signer, signerByToken } from '../esign';
import { StoredFile } from '../files';
import { hasPassed, nextCheck, requestedChecks, type CheckKind } from './checks/checks';
import { recordSignerLocation } from './checks/location-check';
import { checkFace, FACE_PHOTO_MAX_BYTES } from './checks/face-check';
import { sendOneTimeCode, verifyOneTimeCode } from './checks/one-time-codes';
import { maskEmail, maskPhone } from './checks/recipients';
import { signAsSigner, startAadhaarSigning } from './sign-as-signer';

export const SIGNER_API = '/signer-api';

function checkView(signer: Signer, kind: CheckKind) {
  const status = hasPassed(signer, kind) ? 'passed' : 'pending';
  switch (kind) {
    case 'email':
      return { kind, status, sent_to: signer.email ? maskEmail(signer.email) : null };
    case 'mobile':
      return { kind, status, sent_to: signer.mobile ? maskPhone(`+${signer.countryCode ?? ''}${signer.mobile}`) : null };
    case 'location':
      return {
        kind,
        status,
        source: signer.locationSource ?? 'device',
        geofence: signer.enforceGeofence
          ? { latitude: signer.latitude, longitude: signer.longitude, radius: signer.radius }
          : null,
      };
    case 'face': {
      const left = Math.max(0, (signer.faceMatch.max_attempts ?? 0) - signer.faceAttempts);
      return { kind, status: status === 'pending' && left === 0 ? 'failed' : status, attempts_left: left };
    }
  }
}

/** What a signer may see: their own part, whose turn it is, the checks ahead, and the session's state. Never other tokens. */
async function signerView(em: EntityManager, signer: Signer) {
  const session = await em.findOneOrFail(EsignSession, { id: signer.session.id });
  const signers = await em.find(Signer, { session }, { orderBy: { position: 'asc' } });
  const current = signers.find((s) => s.position === session.signerIdx);
  return {
    session: {
      client_id: session.id,
      status: session.status,
      filename: session.filename,
      sender: session.sender ?? null,
      signer_idx: session.signerIdx,
      signer_count: signers.length,
      allow_download: session.allowDownload,
      redirect_url: session.redirectUrl ?? null,
      email_template_overrides: session.emailTemplateOverrides ?? null,
      expires_at: session.expiresAt,
    },
    signer: {
      signer_id: signer.id,
      full_name: signer.fullName,
      sign_type: signer.signType,
      reason: signer.reason ?? null,
      status: signer.status,
      eligible: session.status === 'pending' && signer.status === 'pending' && signer.position === session.signerIdx,
      positions: positionsOf(signer.elements, session.stampPageCount),
      // Where this signer's signature goes, on the pages of the current document (stamp pages come first).
      fields: signer.elements
        .filter((element) => element.type === 'signature')
        .map((element) => ({
          page: element.page + session.stampPageCount,
          x: element.x,
          y: element.y,
          width: element.width,
          height: element.height,
        })),
    },
    whose_turn: session.status === 'pending' && current ? { position: current.position, full_name: current.fullName } : null,
    checks: requestedChecks(signer).map((kind) => checkView(signer, kind)),
    next_check: nextCheck(signer),
  };
}

/**
 * The signer API: authenticated by the signer's token alone (`Authorization: Bearer <signer token>`), it
 * opens one signer's view, the current document, the pre-signing checks and the signing action. Integrator
 * tokens open nothing here. Every step lands in the session's audit trail with the caller's address.
 */
export function createSignerApi(services: AppServices): express.Router {
  const router = express.Router();
  const json = express.json({ limit: '16kb' });
  const policies = ratePolicies(services.config);
  const handle =
    (run: (req: Request, res: Response, em: EntityManager, token: string | null) => Promise<void>) =>
    (req: Request, res: Response, next: NextFunction) => {
      const token = bearerTokenOf(req.headers.authorization);
      try {
        if (token) takeRequest(services.rateLimiter, policies.signer, signerCaller(token), res);
        else takeRequest(services.rateLimiter, policies.address, req.ip ?? 'unknown', res);
      } catch (error) {
        return next(error);
      }
      const problems = findControlCharacters(req.body, '');
      if (problems.length > 0) return next(AppError.badRequest(problems));
      run(req, res, services.orm.em.fork(), token).catch(next);
    };
  const bodyOf = (req: Request) =>
    (req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {}) as Record<string, unknown>;

  router.get(
    '/session',
    handle(async (req, res, em, token) => {
      sendSuccess(res, await signerView(em, await signerByToken(em, token)));
    }),
  );
  router.get(
    '/document',
    handle(async (req, res, em, token) => {
      const signer = await signerByToken(em, token);
      const session = await em.findOneOrFail(EsignSession, { id: signer.session.id });
      if (session.status === 'cancelled' || session.status === 'expired')
        throw new AppError('conflict', { message: `the session is ${session.status}` });
      if (session.status === 'completed' && !session.allowDownload)
        throw new AppError('conflict', { message: 'downloading the signed document is not allowed' });
      const file = await em.findOneOrFail(StoredFile, { id: session.currentPdfFile.id });
      // The signer opened the document (the page loads it once; a download after completion counts too).
      await em.transactional(async (tx) => {
        recordAudit(tx, { session, signer, event: 'viewed', origin: requestOrigin(req), details: { file_id: file.id } });
      });
      res.setHeader('Content-Type', 'application/pdf');
      res.setHeader('Content-Length', String(file.sizeBytes));
      res.setHeader('Cache-Control', 'private, no-store');
      await pipeline(await services.blobs.getStream(file.storageKey), res);
    }),
  );
  router.post(
    '/otp/send',
    json,
    handle(async (req, res, em, token) => {
      sendSuccess(res, await sendOneTimeCode(services, em, token, bodyOf(req), requestOrigin(req)));
    }),
  );
  router.post(
    '/otp/verify',
    json,
    handle(async (req, res, em, token) => {
      sendSuccess(res, await verifyOneTimeCode(services, em, token, bodyOf(req), requestOrigin(req)));
    }),
  );
  router.post(
    '/location',
    json,
    handle(async (req, res, em, token) => {
      const location = await recordSignerLocation(services, em, token, bodyOf(req), requestOrigin(req));
      sendSuccess(res, { status: 'passed', ...location });
    }),
  );
  router.post(
    '/face',
    express.raw({ type: () => true, limit: FACE_PHOTO_MAX_BYTES }),
    handle(async (req, res, em, token) => {
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      const photo = Buffer.isBuffer(req.body) ? req.body : undefined;
      sendSuccess(res, await checkFace(services, em, token, { type, bytes: photo }, requestOrigin(req)));
    }),
  );
  router.post(
    '/aadhaar/otp',
    json,
    handle(async (req, res, em, token) => {
      const body = bodyOf(req) as { aadhaar_number?: string; consent?: boolean };
      sendSuccess(res, await startAadhaarSigning(services, em, token, body, requestOrigin(req)));
    }),
  );
  router.post(
    '/sign',
    json,
    handle(async (req, res, em, token) => {
      const body = bodyOf(req) as { consent?: boolean; transaction_id?: string; otp?: string };
      await signAsSigner(services, em, token, body, requestOrigin(req));
      sendSuccess(res, await signerView(em.fork(), await signerByToken(em.fork(), token)));
    }),
  );
  return router;
}
