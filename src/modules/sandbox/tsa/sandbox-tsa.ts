/**
 * The sandbox's own time-stamping authority: an RFC 3161 TSA behind `POST /sandbox/tsa`, with a certificate
 * (extended key usage id-kp-timeStamping, critical) issued by the sandbox root CA. The service calls it over HTTP
 * like any other TSA (TSA_URL defaults to it in sandbox); production names a real one.
 */
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import express, { type Router } from 'express';
import type { AppServices } from '../../../platform/services';
import {
  decodeTimestampRequest,
  DerError,
  encodeTimestampResponse,
  encodeTstInfo,
  issueSigningCertificate,
  OID,
  PKI_FAILURE,
  PKI_STATUS,
  platformKey,
  signEncapsulatedCms,
  TIMESTAMP_QUERY_TYPE,
  TIMESTAMP_REPLY_TYPE,
  type SigningIdentity,
} from '../../signing';
import { sandboxRevocationPointers, sandboxRootCa } from '../sandbox-ca';

export const SANDBOX_TSA_PATH = '/sandbox/tsa';
/** The sandbox TSA's policy: a UUID OID (X.667), so that it names nothing real. */
export const SANDBOX_TSA_POLICY = '2.25.93146885898242568412256669630165616229';

const TSA_KEY = 'sandbox-tsa';
const TEN_YEARS_MS = 10 * 365 * 86_400_000;
/** A TimeStampReq is a few dozen bytes; extensions aside, anything large is not one. */
const MAX_REQUEST_BYTES = 4096;

export async function sandboxTsaIdentity(services: AppServices, em: EntityManager): Promise<SigningIdentity> {
  const root = await sandboxRootCa(services, em);
  return platformKey(services, em, TSA_KEY, () => {
    const now = Date.now();
    const tsa = issueSigningCertificate(
      root,
      { commonName: 'Esign Sandbox Time-Stamping Authority', organization: 'Esign Sandbox (not trusted)', country: 'IN' },
      { notBefore: new Date(now - 3_600_000), notAfter: new Date(now + TEN_YEARS_MS - 86_400_000) },
      { purpose: 'timestamps', revocation: sandboxRevocationPointers(services, 'root') },
    );
    return { ...tsa, chainPems: [root.certificatePem] };
  });
}

/** The TimeStampResp for a TimeStampReq: a token over its imprint at the current time, or a refusal. */
export function answerTimestampRequest(identity: SigningIdentity, requestBytes: Buffer, now = new Date()): Buffer {
  let request;
  try {
    request = decodeTimestampRequest(requestBytes);
  } catch (error) {
    if (error instanceof DerError)
      return encodeTimestampResponse(PKI_STATUS.rejection, undefined, PKI_FAILURE.badDataFormat, error.message);
    throw error;
  }
  if (request.hashOid !== OID.sha256 || request.digest.length !== 32) {
    return encodeTimestampResponse(PKI_STATUS.rejection, undefined, PKI_FAILURE.badAlg, 'SHA-256 imprints only');
  }
  if (request.policyOid && request.policyOid !== SANDBOX_TSA_POLICY) {
    return encodeTimestampResponse(
      PKI_STATUS.rejection,
      undefined,
      PKI_FAILURE.unacceptedPolicy,
      `policy ${SANDBOX_TSA_POLICY} only`,
    );
  }
  if (request.hasExtensions) {
    return encodeTimestampResponse(PKI_STATUS.rejection, undefined, PKI_FAILURE.badRequest, 'no extensions are supported');
  }
  const tstInfo = encodeTstInfo({
    policyOid: SANDBOX_TSA_POLICY,
    hashOid: OID.sha256,
    digest: request.digest,
    serialNumber: randomBytes(16),
    genTime: now,
    nonce: request.nonce,
    accuracySeconds: 1,
  });
  // RFC 3161 2.4.1: the TSA's certificates travel in the token only when asked for (certReq); the token names its
  // certificate either way (ESSCertIDv2).
  const token = signEncapsulatedCms(tstInfo, OID.tstInfo, identity, { certificates: request.certReq });
  return encodeTimestampResponse(PKI_STATUS.granted, token);
}

/** `POST /sandbox/tsa`, in sandbox only (elsewhere the router is empty). */
export function sandboxTsaRouter(services: AppServices): Router {
  const router = express.Router();
  if (services.config.env !== 'sandbox') return router;
  router.post(SANDBOX_TSA_PATH, express.raw({ type: TIMESTAMP_QUERY_TYPE, limit: MAX_REQUEST_BYTES }), (req, res, next) => {
    if (!Buffer.isBuffer(req.body)) {
      res.status(415).type('text/plain').send(`send ${TIMESTAMP_QUERY_TYPE}`);
      return;
    }
    sandboxTsaIdentity(services, services.orm.em.fork())
      .then((identity) =>
        res
          .status(200)
          .type(TIMESTAMP_REPLY_TYPE)
          .send(answerTimestampRequest(identity, req.body as Buffer)),
      )
      .catch(next);
  });
  return router;
}
