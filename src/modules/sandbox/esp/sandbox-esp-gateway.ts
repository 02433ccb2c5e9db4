/**
 * The sandbox ESP as a gateway speaking the CCA eSign API over HTTP (versions 2.1 and 3.2), so that the service,
 * or any other ASP, signs through it exactly as through a real ESP. No database: everything it needs is given as
 * options, and the signer's progress between its pages travels in a sealed hidden field (AES-256-GCM, with an
 * expiry), so any process holding the same `stateSecret` can serve the next page. Only a 3.2 request acknowledged
 * and not yet opened by the signer's browser waits in memory, in the process that acknowledged it (10 minutes).
 *
 * The exchange (mount the router at, say, /sandbox/esp):
 *   1. The request, POSTed to the mount path. Every request's signature is checked against the trusted ASP
 *      certificates first.
 *      - 2.1: by the signer's browser, a form (x-www-form-urlencoded): `eSignRequest` = the signed <Esign> XML (as
 *        is, or base64), `aspTxnID` = its txn, `Content-Type` = "application/xml" (the field names C-DAC's and
 *        eMudhra's gateways use; NSDL's `msg` is accepted as a synonym of `eSignRequest`). Refused, the signer sees
 *        an error page and nothing is sent anywhere (the responseUrl of an unverified request may be anyone's).
 *      - 3.2: by the ASP's server, the XML as the body (`application/xml`; the URL-encoded XML as a form body, as
 *        eMudhra's SDK sends it, and the form fields above are read too). Whichever way it came, a 3.2 request is
 *        answered at once, to the caller, with a signed acknowledgement (signing/esp/cca/esign-ack.ts): status="2" and a
 *        resCode, or status="0" with errCode/errMsg (a request that does not verify, a stale ts). The ASP then
 *        sends the signer's browser to `<mount>/authpage` with `txnref` = base64("<txn>|<resCode>") (GET query or
 *        form POST). A browser that posts a 3.2 request itself gets the acknowledgement XML, not a page.
 *   2. Its pages: Aadhaar number (Verhoeff-checked, one of SANDBOX_IDENTITIES) and consent (3.2: the document
 *      links to its docUrl), then the OTP (always 123456) or, with AuthMode 2, the biometric capture
 *      (SANDBOX_BIOMETRIC); a wrong one may be retried, the third closes the transaction. Cancel closes it too.
 *   3. The answer, a signed <EsignResp> (success: a 30-minute certificate from `issuer` and a PKCS#7 over each
 *      InputHash; failure: status="0" with errCode/errMsg, see GATEWAY_ERRORS):
 *      - 2.1: the browser carries it: an auto-submitted form POSTs `eSignResponse` (the XML) and `espTxnID` (the
 *        ESP's resCode) to responseUrl.
 *      - 3.2: the gateway POSTs the XML to responseUrl itself (Content-Type application/xml; the acknowledgement's
 *        resCode), then redirects the browser (303) to redirectUrl with `txnref` = base64("<txn>|<resCode>").
 *      2.1: once a request has verified, every failure after it (a stale ts, an unsupported AuthMode, OTP attempts
 *      used up, cancel, an expired page) is answered this way too; 3.2: every failure after the acknowledgement.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { MAX_ESIGN_XML_BYTES } from '../../signing';
import { openGateway, type SandboxEspGatewayOptions } from './gateway-context';
import { openAuthPage, receiveRequest } from './gateway-request';
import { authenticate, submitAadhaar } from './gateway-signer-steps';
import { sendError } from './sandbox-esp-pages';

export { GATEWAY_ERRORS, MAX_AUTHENTICATION_ATTEMPTS, type SandboxEspGatewayOptions } from './gateway-context';

/** The gateway's routes, each step in its own file: the request (gateway-request.ts), the signer's pages and signing. */
export function sandboxEspGatewayRouter(options: SandboxEspGatewayOptions): Router {
  const gateway = openGateway(options);
  const router = express.Router();
  // A form-encoded request XML may grow up to three times (percent-encoding); the XML itself is checked after.
  router.use(express.urlencoded({ extended: false, limit: MAX_ESIGN_XML_BYTES * 3 + 4096, parameterLimit: 20 }));
  router.post('/', express.text({ type: ['application/xml', 'text/xml'], limit: MAX_ESIGN_XML_BYTES }), receiveRequest(gateway));
  router.all('/authpage', openAuthPage(gateway));
  router.post('/aadhaar', submitAadhaar(gateway));
  router.post('/authenticate', authenticate(gateway));
  // Refusals of the body parser (too large, malformed) and anything unexpected: the gateway's own error page.
  router.use((error: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 500;
    sendError(
      res,
      status,
      status === 500 ? 'The sandbox ESP failed. Try again from the application.' : 'The request was refused.',
    );
  });
  return router;
}
