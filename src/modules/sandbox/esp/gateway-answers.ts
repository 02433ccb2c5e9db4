/** How the gateway answers the ASP: the final EsignResp (2.1 through the browser, 3.2 POSTed), 3.2's acknowledgement. */
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { buildEsignAcknowledgement, buildEsignResponse, esignTxnRef } from '../../signing';
import { RESPONSE_POST_TIMEOUT_MS, type Gateway } from './gateway-context';
import { escapeHtml, sendPage, type VerifiedRequest } from './sandbox-esp-pages';

export type GatewayOutcome =
  | { status: 'failure'; errCode: string; errMsg: string }
  | { status: 'success'; userCertificatePem: string; signatures: { id: string; cms: Uint8Array }[] };

/** The failure EsignResp, answered to the ASP the way the request's version says. */
export function fail(
  gateway: Gateway,
  res: Response,
  request: VerifiedRequest,
  error: { errCode: string; errMsg: string },
): Promise<void> {
  return deliver(gateway, res, request, { status: 'failure', ...error });
}

export async function deliver(gateway: Gateway, res: Response, request: VerifiedRequest, outcome: GatewayOutcome): Promise<void> {
  // 3.2: the acknowledgement's resCode, so the final response and its txnref name what the ASP was told.
  const resCode = request.resCode ?? randomUUID();
  if (request.resCode) gateway.waiting.delete(request.resCode);
  const xml = buildEsignResponse({
    version: request.ver,
    txn: request.txn,
    resCode,
    signer: gateway.options.responseSigner,
    ...outcome,
  });
  if (request.ver === '2.1') returnThroughBrowser(res, request, xml, resCode, outcome);
  else await postToAsp(res, request, xml, resCode);
}

/** 2.1: an auto-submitted form carries the response to the ASP's responseUrl. */
function returnThroughBrowser(res: Response, request: VerifiedRequest, xml: string, resCode: string, outcome: GatewayOutcome) {
  sendPage(res, 200, {
    title: 'Returning to the application',
    formAction: request.responseUrl,
    autoSubmit: true,
    body: `<form id="return" method="post" action="${escapeHtml(request.responseUrl)}">
  <input type="hidden" name="eSignResponse" value="${escapeHtml(xml)}">
  <input type="hidden" name="espTxnID" value="${escapeHtml(resCode)}">
  <p>${outcome.status === 'success' ? 'The document is signed.' : escapeHtml(outcome.errMsg) + '.'} Taking you back to ${escapeHtml(request.aspId)}…</p>
  <button type="submit">Continue to ${escapeHtml(new URL(request.responseUrl).host)}</button>
</form>`,
  });
}

/** 3.2: the gateway POSTs the response to responseUrl, then sends the browser to redirectUrl with the txnref. */
async function postToAsp(res: Response, request: VerifiedRequest, xml: string, resCode: string) {
  let delivered = false;
  try {
    const answer = await fetch(request.responseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/xml; charset=utf-8' },
      body: xml,
      redirect: 'manual',
      signal: AbortSignal.timeout(RESPONSE_POST_TIMEOUT_MS),
    });
    await answer.body?.cancel();
    delivered = answer.ok;
  } catch {
    delivered = false;
  }
  const back = new URL(request.redirectUrl!);
  back.searchParams.set('txnref', esignTxnRef(request.txn, resCode));
  if (delivered) {
    res.redirect(303, back.toString());
    return;
  }
  sendPage(res, 502, {
    title: 'The application could not be reached',
    body: `<p role="alert">The response could not be delivered to ${escapeHtml(request.aspId)}. Go back and try again from there.</p>
<p><a href="${escapeHtml(back.toString())}">Return to ${escapeHtml(back.host)}</a></p>`,
  });
}

/** 3.2: the signed acknowledgement, answered to whoever POSTed the request (the ASP's server). */
export function acknowledge(
  gateway: Gateway,
  res: Response,
  txn: string,
  outcome: { status: 'accepted'; resCode: string } | { status: 'refused'; errCode: string; errMsg: string },
): void {
  const xml = buildEsignAcknowledgement({
    version: '3.2',
    txn,
    signer: gateway.options.responseSigner,
    ...(outcome.status === 'accepted'
      ? { status: 'accepted', resCode: outcome.resCode }
      : { status: 'refused', resCode: randomUUID(), errCode: outcome.errCode, errMsg: outcome.errMsg }),
  });
  res.status(200).set({ 'Content-Type': 'application/xml; charset=utf-8', 'Cache-Control': 'no-store' }).send(xml);
}
