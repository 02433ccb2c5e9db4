import express, { type NextFunction, type Request, type Response } from 'express';
import { pipeline } from 'node:stream/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { bearerTokenOf } from '../../platform/auth/bearer';
import { AppError } from '../../platform/errors';
import { ratePolicies, signerCaller, takeRequest } from '../../platform/rate-limit/enforce';
import { findControlCharacters } from '../../platform/validation/text';
import { sendSuccess } from '../../platform/rest/envelope';
import type { AppServices } from '../../platform/services';
import { requestOrigin } from '../audit';
import { signerByToken } from '../esign/signer-side';
import { startAadhaarEsign } from './aadhaar/aadhaar-signing';
import { chooseSignerLanguage } from './choose-language';
import { declineAsSigner } from './decline';
import { completeDscSigning, startDscSigning } from './dsc/dsc-signing';
import { FIELD_IMAGE_MAX_BYTES, fillFields, fillImageField } from './fill-fields';
import { delegateAsSigner } from './delegate';
import { recordSignerLocation } from './checks/location-check';
import { checkFace, FACE_PHOTO_MAX_BYTES } from './checks/face-check';
import { sendOneTimeCode, verifyOneTimeCode } from './checks/one-time-codes';
import { readSignerDocument } from './read-document';
import { signAsSigner } from './sign-in-turn';
import { signerView } from './signer-view';

export const SIGNER_API = '/signer-api';

type SignerRun = (req: Request, res: Response, em: EntityManager, token: string | null) => Promise<void>;
type Handle = (run: SignerRun) => express.RequestHandler;

/**
 * The signer API: authenticated by the signer's token alone (`Authorization: Bearer <signer token>`), it
 * opens one signer's view, the current document, the pre-signing checks and the signing action. Integrator
 * tokens open nothing here. Every step lands in the session's audit trail with the caller's address.
 */
export function createSignerApi(services: AppServices): express.Router {
  const router = express.Router();
  const json = express.json({ limit: '16kb' });
  const handle = signerHandler(services);
  readRoutes(services, router, handle);
  checkRoutes(services, router, handle, json);
  fieldRoutes(services, router, handle);
  signingRoutes(services, router, handle, json);
  return router;
}

/**
 * Every route's wrapper: the rate limit (by signer token, else by address), no control characters in the body,
 * a fresh EntityManager, and errors to the error handler.
 */
function signerHandler(services: AppServices): Handle {
  const policies = ratePolicies(services.config);
  return (run) => (req: Request, res: Response, next: NextFunction) => {
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
}

const bodyOf = (req: Request) =>
  (req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {}) as Record<string, unknown>;

/** `?document=<position>`: which document of the envelope; absent, the first. */
function documentPosition(req: Request): number {
  const raw = req.query.document;
  if (raw === undefined) return 0;
  if (typeof raw !== 'string' || !/^\d{1,2}$/.test(raw))
    throw AppError.badRequest([{ field: 'document', problem: 'must be a zero-based document position' }]);
  return Number(raw);
}

/** The signer's view and the current documents. */
function readRoutes(services: AppServices, router: express.Router, handle: Handle): void {
  router.get(
    '/session',
    handle(async (req, res, em, token) => {
      sendSuccess(res, await signerView(em, await signerByToken(em, token)));
    }),
  );
  // The language the signer reads in, kept on the signer (the page's switch, or its host's set-language).
  router.post(
    '/language',
    express.json({ limit: '1kb' }),
    handle(async (req, res, em, token) => {
      await chooseSignerLanguage(em, token, bodyOf(req), requestOrigin(req));
      sendSuccess(res, await signerView(em.fork(), await signerByToken(em.fork(), token)));
    }),
  );
  router.get(
    '/document',
    handle(async (req, res, em, token) => {
      const document = await readSignerDocument(services, em, token, requestOrigin(req), documentPosition(req));
      res.setHeader('Content-Type', 'application/pdf');
      res.setHeader('Content-Length', String(document.sizeBytes));
      res.setHeader('Cache-Control', 'private, no-store');
      await pipeline(await document.open(), res);
    }),
  );
}

/** The pre-signing checks: one-time codes, location, face. */
function checkRoutes(services: AppServices, router: express.Router, handle: Handle, json: express.RequestHandler): void {
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
}

/** The signer's fields: values (a multi-line text may be long: its own body limit), and images (a company seal). */
function fieldRoutes(services: AppServices, router: express.Router, handle: Handle): void {
  router.post(
    '/fields',
    express.json({ limit: '1mb' }),
    handle(async (req, res, em, token) => {
      await fillFields(em, token, bodyOf(req), requestOrigin(req));
      sendSuccess(res, await signerView(em.fork(), await signerByToken(em.fork(), token)));
    }),
  );
  router.post(
    '/fields/:field_id/image',
    express.raw({ type: () => true, limit: FIELD_IMAGE_MAX_BYTES }),
    handle(async (req, res, em, token) => {
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      const bytes = Buffer.isBuffer(req.body) ? req.body : undefined;
      await fillImageField(services, em, token, { fieldId: String(req.params.field_id), type, bytes }, requestOrigin(req));
      sendSuccess(res, await signerView(em.fork(), await signerByToken(em.fork(), token)));
    }),
  );
}

/** Signing (Aadhaar's start at the ESP, a DSC's two steps around the signer's token, or the one-request kinds), declining, delegating. */
function signingRoutes(services: AppServices, router: express.Router, handle: Handle, json: express.RequestHandler): void {
  router.post(
    '/esp/start',
    json,
    handle(async (req, res, em, token) => {
      sendSuccess(res, await startAadhaarEsign(services, em, token, bodyOf(req), requestOrigin(req)));
    }),
  );
  router.post(
    '/dsc/start',
    json,
    handle(async (req, res, em, token) => {
      sendSuccess(res, await startDscSigning(services, em, token, bodyOf(req), requestOrigin(req)));
    }),
  );
  router.post(
    '/dsc/complete',
    json,
    handle(async (req, res, em, token) => {
      await completeDscSigning(services, em, token, bodyOf(req), requestOrigin(req));
      sendSuccess(res, await signerView(em.fork(), await signerByToken(em.fork(), token)));
    }),
  );
  router.post(
    '/sign',
    json,
    handle(async (req, res, em, token) => {
      const body = bodyOf(req) as { consent?: boolean };
      await signAsSigner(services, em, token, body, requestOrigin(req));
      sendSuccess(res, await signerView(em.fork(), await signerByToken(em.fork(), token)));
    }),
  );
  router.post(
    '/decline',
    json,
    handle(async (req, res, em, token) => {
      await declineAsSigner(services, em, token, bodyOf(req), requestOrigin(req));
      sendSuccess(res, await signerView(em.fork(), await signerByToken(em.fork(), token)));
    }),
  );
  router.post(
    '/delegate',
    json,
    handle(async (req, res, em, token) => {
      sendSuccess(res, await delegateAsSigner(services, em, token, bodyOf(req), requestOrigin(req)));
    }),
  );
}
