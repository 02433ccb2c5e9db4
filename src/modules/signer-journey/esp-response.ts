import express, { type NextFunction, type Request, type Response } from 'express';
import { ratePolicies, takeRequest } from '../../platform/rate-limit/enforce';
import type { AppServices } from '../../platform/services';
import { requestOrigin } from '../audit';
import { MAX_ESIGN_XML_BYTES } from '../signing';
import { acceptEspResponse } from './aadhaar-signing';
import { SIGNER_RETURN_PATH } from './page/signer-page';

/**
 * Where ESPs answer (`responseUrl` = `{PUBLIC_URL}/esp/response/<backend>`), unauthenticated as the protocol is:
 * the response's XML signature is the credential. eSign 2.1 ESPs send it through the signer's browser (a form POST
 * of `eSignResponse`): the browser then goes back to the signing page. eSign 3.2 ESPs POST the XML themselves
 * (`application/xml`): they get 200 when it was taken, 400 when refused. Rate-limited by address, like every
 * unauthenticated route; bodies are capped at the eSign XML limit.
 */
export function createEspResponseRouter(services: AppServices): express.Router {
  const router = express.Router();
  const policies = ratePolicies(services.config);
  const form = express.urlencoded({ extended: false, limit: MAX_ESIGN_XML_BYTES * 3 + 4096, parameterLimit: 10 });
  const xml = express.text({ type: ['application/xml', 'text/xml'], limit: MAX_ESIGN_XML_BYTES });

  router.post('/:backend', form, xml, (req: Request, res: Response, next: NextFunction) => {
    try {
      takeRequest(services.rateLimiter, policies.address, req.ip ?? 'unknown', res);
    } catch (error) {
      return next(error);
    }
    const fromBrowser = typeof req.body === 'object' && req.body !== null;
    const field = fromBrowser ? (req.body as Record<string, unknown>).eSignResponse : undefined;
    const body = fromBrowser
      ? typeof field === 'string'
        ? decodeField(field)
        : ''
      : typeof req.body === 'string'
        ? req.body
        : '';
    const backend = String(req.params.backend);
    acceptEspResponse(services, services.orm.em.fork(), backend, body, requestOrigin(req))
      .then((outcome) => {
        if (fromBrowser && outcome.accepted) {
          res.redirect(303, `${SIGNER_RETURN_PATH}?txn=${encodeURIComponent(outcome.txn)}`);
        } else if (fromBrowser) {
          res
            .status(400)
            .type('text/plain')
            .send(
              'This eSign response was refused. Open the signing link from your invitation again to see where signing stands.',
            );
        } else if (outcome.accepted) {
          res.status(200).type('text/plain').send('OK');
        } else {
          res.status(400).type('text/plain').send(`refused: ${outcome.reason}`);
        }
      })
      .catch(next);
  });
  return router;
}

/** The response as posted: the XML itself, or (as some ESPs send it) its base64. */
function decodeField(value: string): string {
  const trimmed = value.trim();
  if (trimmed.startsWith('<')) return trimmed;
  return /^[A-Za-z0-9+/=\s]+$/.test(trimmed) ? Buffer.from(trimmed, 'base64').toString('utf8') : trimmed;
}
