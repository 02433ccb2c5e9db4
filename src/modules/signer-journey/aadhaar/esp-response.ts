import express, { type NextFunction, type Request, type Response } from 'express';
import { ratePolicies, takeRequest } from '../../../platform/rate-limit/enforce';
import type { AppServices } from '../../../platform/services';
import { requestOrigin } from '../../audit';
import { MAX_ESIGN_XML_BYTES } from '../../signing';
import { acceptEspResponse } from './aadhaar-signing';
import { refuseUnreadEspResponse } from './esp-outcomes';
import { ESP_RESPONSE_XML_TYPES, espResponseBody } from './esp-response-body';
import { SIGNER_RETURN_PATH } from '../page/signer-page';

/**
 * Where ESPs answer (`responseUrl` = `{PUBLIC_URL}/esp/response/<backend>`), unauthenticated as the protocol is:
 * the response's XML signature is the credential. eSign 2.1 ESPs send it through the signer's browser (a form POST
 * of `eSignResponse`, or `msg`): the browser then goes back to the signing page. eSign 3.2 ESPs POST the XML
 * themselves (`application/xml` or `text/xml`): they get 200 when it was taken, 400 when refused. What else is
 * accepted and refused: esp-response-body.ts. Rate-limited by address, like every unauthenticated route; bodies are
 * capped at the eSign XML limit.
 */
export function createEspResponseRouter(services: AppServices): express.Router {
  const router = express.Router();
  const policies = ratePolicies(services.config);
  const form = express.urlencoded({ extended: false, limit: MAX_ESIGN_XML_BYTES * 3 + 4096, parameterLimit: 10 });
  const xml = express.text({ type: ESP_RESPONSE_XML_TYPES, limit: MAX_ESIGN_XML_BYTES });
  // Any other body, read only to name the transaction of a refusal (XML sent as text/plain, say).
  const other = express.text({ type: () => true, limit: MAX_ESIGN_XML_BYTES * 3 + 4096 });

  router.post('/:backend', form, xml, other, (req: Request, res: Response, next: NextFunction) => {
    try {
      takeRequest(services.rateLimiter, policies.address, req.ip ?? 'unknown', res);
    } catch (error) {
      return next(error);
    }
    const body = espResponseBody(req);
    const backend = String(req.params.backend);
    const em = services.orm.em.fork();
    const origin = requestOrigin(req);
    const answered =
      'xml' in body
        ? acceptEspResponse(services, em, backend, body.xml, origin)
        : refuseUnreadEspResponse(services, em, backend, body.txn, body.refused, origin);
    answered
      .then((outcome) => {
        const fromBrowser = body.via === 'form';
        if (outcome.accepted) {
          if (fromBrowser) res.redirect(303, `${SIGNER_RETURN_PATH}?txn=${encodeURIComponent(outcome.txn)}`);
          else res.status(200).type('text/plain').send('OK');
          return;
        }
        res
          .status(400)
          .type('text/plain')
          .send(
            fromBrowser
              ? `This eSign response was refused (${outcome.reason}). Open the signing link from your invitation again to see where signing stands.`
              : `refused: ${outcome.reason}`,
          );
      })
      .catch(next);
  });
  return router;
}
