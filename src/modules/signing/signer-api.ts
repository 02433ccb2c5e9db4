import express, { type NextFunction, type Request, type Response } from 'express';
import { pipeline } from 'node:stream/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { bearerTokenOf } from '../../platform/auth/bearer';
import { AppError } from '../../platform/errors';
import { sendSuccess } from '../../platform/rest/envelope';
import type { AppServices } from '../../platform/services';
import { EsignSession } from '../esign/esign-session.entity';
import { positionsOf } from '../esign/session.types';
import { Signer, type StoredElement } from '../esign/signer.entity';
import { StoredFile } from '../files/stored-file.entity';
import { signAsSigner, signerByToken, startAadhaarSigning } from './sign-as-signer';

export const SIGNER_API = '/signer-api';

/** The signer's signature boxes on the current document (pages shifted past stamp pages), for the signing page to outline. */
function fieldsOf(elements: StoredElement[], stampPageCount: number) {
  return elements
    .filter((element) => element.type === 'signature')
    .map(({ page, x, y, width, height }) => ({ page: page + stampPageCount, x, y, width, height }));
}

/** What a signer may see: their own part, whose turn it is, and the session's state. Never other tokens. */
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
      fields: fieldsOf(signer.elements, session.stampPageCount),
    },
    whose_turn: session.status === 'pending' && current ? { position: current.position, full_name: current.fullName } : null,
  };
}

/**
 * The signer API: authenticated by the signer's token alone (`Authorization: Bearer <signer token>`), it
 * opens one signer's view, the current document, and the signing action. Integrator tokens open nothing here.
 */
export function createSignerApi(services: AppServices): express.Router {
  const router = express.Router();
  const handle =
    (run: (req: Request, res: Response, em: EntityManager) => Promise<void>) =>
    (req: Request, res: Response, next: NextFunction) =>
      run(req, res, services.orm.em.fork()).catch(next);

  router.get(
    '/session',
    handle(async (req, res, em) => {
      sendSuccess(res, await signerView(em, await signerByToken(em, bearerTokenOf(req.headers.authorization))));
    }),
  );
  router.get(
    '/document',
    handle(async (req, res, em) => {
      const signer = await signerByToken(em, bearerTokenOf(req.headers.authorization));
      const session = await em.findOneOrFail(EsignSession, { id: signer.session.id });
      if (session.status === 'cancelled' || session.status === 'expired')
        throw new AppError('conflict', { message: `the session is ${session.status}` });
      if (session.status === 'completed' && !session.allowDownload)
        throw new AppError('conflict', { message: 'downloading the signed document is not allowed' });
      const file = await em.findOneOrFail(StoredFile, { id: session.currentPdfFile.id });
      res.setHeader('Content-Type', 'application/pdf');
      res.setHeader('Content-Length', String(file.sizeBytes));
      res.setHeader('Cache-Control', 'private, no-store');
      await pipeline(await services.blobs.getStream(file.storageKey), res);
    }),
  );
  router.post(
    '/aadhaar/otp',
    express.json({ limit: '16kb' }),
    handle(async (req, res, em) => {
      const body = (req.body ?? {}) as { aadhaar_number?: string; consent?: boolean };
      sendSuccess(res, await startAadhaarSigning(services, em, bearerTokenOf(req.headers.authorization), body));
    }),
  );
  router.post(
    '/sign',
    express.json({ limit: '16kb' }),
    handle(async (req, res, em) => {
      const token = bearerTokenOf(req.headers.authorization);
      await signAsSigner(services, em, token, (req.body ?? {}) as { consent?: boolean; transaction_id?: string; otp?: string });
      sendSuccess(res, await signerView(em.fork(), await signerByToken(em.fork(), token)));
    }),
  );
  return router;
}
