import type { EntityManager } from '@mikro-orm/postgresql';
import type { EspConfig } from '../../../config';
import { connectionProblem } from '../../../platform/net/connection-problem';
import type { AppServices } from '../../../platform/services';
import { esignTxnRef, parseAndVerifyEsignAcknowledgement } from './cca/esign-ack';
import { EsignXmlError, MAX_ESIGN_XML_BYTES } from './cca/xml-dsig';
import { espResponseCertificate } from './esp-adapter';

/**
 * eSign 3.x: the ASP's server POSTs the signed request to the ESP (`application/xml`, the XML as the body) and the
 * ESP answers at once with its signed acknowledgement (./cca/esign-ack.ts). Accepted, the signer's browser goes to
 * the ESP's authentication page with `txnref`; anything else ends the hand-over, and the reason says whose it was.
 * Never throws: a timeout, a refused connection, another status, an oversized, unsigned, foreign or malformed
 * answer are each an outcome.
 */
export type EspAcknowledgement =
  | { accepted: true; resCode: string; url: string; fields: { txnref: string } }
  | {
      accepted: false;
      /** The ESP's errCode when it refused, else `esp_unreachable` or `esp_ack_invalid`. */
      code: string;
      message: string;
      /** The ESP answered with a valid, signed refusal (status="0"). */
      refusedByEsp: boolean;
    };

export async function postEspRequest(
  services: AppServices,
  em: EntityManager,
  esp: EspConfig,
  request: { txn: string; xml: string },
): Promise<EspAcknowledgement> {
  const unreachable = (message: string): EspAcknowledgement => ({
    accepted: false,
    code: 'esp_unreachable',
    message,
    refusedByEsp: false,
  });
  const invalidAck = (message: string): EspAcknowledgement => ({
    accepted: false,
    code: 'esp_ack_invalid',
    message: `the eSign Service Provider's acknowledgement was refused: ${message}`,
    refusedByEsp: false,
  });
  if (!esp.authUrl) return unreachable(`no authentication page is configured for ${esp.name} (ESP_<NAME>_AUTH_URL)`);
  let body: string;
  try {
    const answer = await fetch(esp.url, {
      method: 'POST',
      headers: { 'content-type': 'application/xml; charset=utf-8', accept: 'application/xml, text/xml' },
      body: request.xml,
      redirect: 'manual',
      signal: AbortSignal.timeout(esp.ackTimeoutSeconds * 1000),
    });
    if (answer.status !== 200) {
      await answer.body?.cancel().catch(() => undefined);
      return unreachable(`the eSign Service Provider answered HTTP ${answer.status} instead of an acknowledgement`);
    }
    body = await boundedText(answer, MAX_ESIGN_XML_BYTES);
  } catch (error) {
    if (error instanceof EsignXmlError) return invalidAck(error.message);
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    services.log.warn({ txn: request.txn, backend: esp.name, error }, 'eSign request not acknowledged');
    return unreachable(
      timedOut
        ? `the eSign Service Provider did not acknowledge the request within ${esp.ackTimeoutSeconds} s`
        : `the eSign Service Provider could not be reached (${connectionProblem(error)})`,
    );
  }
  let ack;
  try {
    ack = parseAndVerifyEsignAcknowledgement(ackXml(body), await espResponseCertificate(services, em, esp));
  } catch (error) {
    if (!(error instanceof EsignXmlError)) throw error;
    return invalidAck(error.message);
  }
  if (ack.txn !== request.txn) return invalidAck(`it names transaction ${ack.txn}, not ${request.txn}`);
  if (ack.status === '0') {
    return {
      accepted: false,
      code: ack.errCode || 'esp_refused',
      message: ack.errMsg || 'the eSign Service Provider refused the request',
      refusedByEsp: true,
    };
  }
  return { accepted: true, resCode: ack.resCode, url: esp.authUrl, fields: { txnref: esignTxnRef(request.txn, ack.resCode) } };
}

/** The acknowledgement as answered: the XML itself, or its base64 (as some ESPs send XML). */
function ackXml(body: string): string {
  const trimmed = body.trim();
  if (trimmed.startsWith('<') || !/^[A-Za-z0-9+/=\s]+$/.test(trimmed)) return trimmed;
  return Buffer.from(trimmed, 'base64').toString('utf8');
}

/** The body as text, refused (EsignXmlError) past `limit` bytes without reading the rest. */
async function boundedText(answer: Response, limit: number): Promise<string> {
  const reader = answer.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new EsignXmlError('too_large', `the acknowledgement is over ${limit} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
