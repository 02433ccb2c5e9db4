/**
 * An RFC 3161 client over HTTP (RFC 3161 3.4: POST of `application/timestamp-query`, answer
 * `application/timestamp-reply`). Each request carries a fresh nonce and asks for the TSA's certificate; the token
 * is checked before it is used: granted, signed by a time-stamping certificate, over our digest, with our nonce
 * (and our policy, when one was asked for). Network failures, timeouts and 5xx answers are retried; a refusal is
 * not.
 */
import { randomBytes, X509Certificate } from 'node:crypto';
import { AnswerTooLarge, readBounded } from '../../../platform/net/read-bounded';
import { OID } from '../cms-algorithms';
import { verifyEncapsulatedCms } from '../cms-verify';
import { DerError } from '../der';
import type { Stamper } from './signature-timestamp';
import {
  decodeTimestampResponse,
  decodeTstInfo,
  encodeTimestampRequest,
  PKI_STATUS,
  TIMESTAMP_QUERY_TYPE,
  TIMESTAMP_REPLY_TYPE,
} from './timestamp-protocol';

export interface TsaSettings {
  url: string;
  /** Sent with every request, e.g. `Authorization: Basic ...` for a TSA that wants credentials. */
  authHeader?: { name: string; value: string };
  /** The policy the token must be issued under; the TSA's default when absent. */
  policyOid?: string;
  timeoutMs: number;
  /** Further attempts after the first, for failures that may pass (network, timeout, 5xx). */
  retries: number;
}

/** The TSA could not give a usable token; `retryable` when a later attempt may succeed. */
export class TsaError extends Error {
  override name = 'TsaError';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** A token is a few kilobytes (a TSTInfo, a signature, the TSA's certificates); anything far larger is refused. */
const MAX_REPLY_BYTES = 256 * 1024;

export function tsaStamper(settings: TsaSettings): Stamper {
  return async (digest) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await requestToken(settings, digest);
      } catch (error) {
        const tsaError = error instanceof TsaError ? error : new TsaError(`TSA unreachable: ${(error as Error).message}`, true);
        if (!tsaError.retryable || attempt >= settings.retries) throw tsaError;
        await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt + Math.random() * 100));
      }
    }
  };
}

async function requestToken(settings: TsaSettings, digest: Buffer): Promise<Buffer> {
  const nonce = randomBytes(8);
  const response = await fetch(settings.url, {
    method: 'POST',
    headers: {
      'content-type': TIMESTAMP_QUERY_TYPE,
      accept: TIMESTAMP_REPLY_TYPE,
      ...(settings.authHeader ? { [settings.authHeader.name]: settings.authHeader.value } : {}),
    },
    body: new Uint8Array(encodeTimestampRequest({ digest, policyOid: settings.policyOid, nonce })),
    redirect: 'error',
    signal: AbortSignal.timeout(settings.timeoutMs),
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new TsaError(`TSA answered HTTP ${response.status}`, response.status >= 500 || response.status === 429);
  }
  const reply = await readBounded(response, MAX_REPLY_BYTES).catch((error: unknown) => {
    throw error instanceof AnswerTooLarge ? new TsaError(`TSA ${error.message}`, false) : error;
  });
  return checkedToken(reply, digest, nonce, settings.policyOid);
}

async function checkedToken(reply: Buffer, digest: Buffer, nonce: Buffer, policyOid: string | undefined): Promise<Buffer> {
  let answer;
  try {
    answer = decodeTimestampResponse(reply);
  } catch (error) {
    if (error instanceof DerError) throw new TsaError(`TSA answer is not a TimeStampResp: ${error.message}`, false);
    throw error;
  }
  if (answer.status !== PKI_STATUS.granted && answer.status !== PKI_STATUS.grantedWithMods) {
    throw new TsaError(`TSA refused (status ${answer.status}${answer.statusText ? `: ${answer.statusText}` : ''})`, false);
  }
  if (!answer.token) throw new TsaError('TSA granted but sent no token', false);
  const verified = await verifyEncapsulatedCms(answer.token, OID.tstInfo);
  if (!verified.content || !verified.signatureValid || !verified.digestValid || !verified.signingCertificateV2Valid) {
    throw new TsaError(`TSA token does not verify: ${verified.problems.join('; ')}`, false);
  }
  if (!new X509Certificate(verified.signerCertificatePem).keyUsage?.includes(OID.timeStamping)) {
    throw new TsaError('TSA token is not signed by a time-stamping certificate', false);
  }
  let info;
  try {
    info = decodeTstInfo(verified.content);
  } catch (error) {
    if (error instanceof DerError) throw new TsaError(`TSA token holds no valid TSTInfo: ${error.message}`, false);
    throw error;
  }
  if (info.hashOid !== OID.sha256 || !info.digest.equals(digest)) throw new TsaError('TSA token stamps another digest', false);
  if (!info.nonce || BigInt(`0x${info.nonce.toString('hex')}`) !== BigInt(`0x${nonce.toString('hex')}`)) {
    throw new TsaError('TSA token does not repeat our nonce', false);
  }
  if (policyOid && info.policyOid !== policyOid) throw new TsaError(`TSA token is under policy ${info.policyOid}`, false);
  return answer.token;
}
