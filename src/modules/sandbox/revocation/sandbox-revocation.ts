/**
 * The sandbox CA's revocation services, as a real CA publishes them and as the URLs in its certificates say
 * (../sandbox-ca.ts, `sandboxRevocationPointers`): a CRL per CA, each CA's certificate, and an OCSP responder
 * (RFC 6960, POST and GET). Only the DSC CA revokes (../dsc/sandbox-dsc.ts): its CRL lists what it revoked and OCSP
 * answers `revoked` for those; every other certificate a sandbox CA issued is `good`. The sandbox does not record what
 * it issued, so "good" means "issued by this CA", and a CertID of another issuer gets `unauthorized`.
 */
import express, { type Router } from 'express';
import type { AppServices } from '../../../platform/services';
import { SANDBOX_ISSUERS, sandboxIssuer, type SandboxIssuer } from '../sandbox-ca';
import { SandboxRevokedCertificate, serialKey } from '../dsc/sandbox-revoked-certificate.entity';
import { X509Certificate } from 'node:crypto';
import {
  decodeOcspRequest,
  DerError,
  encodeCrl,
  encodeOcspFailure,
  encodeOcspResponse,
  issuedBy,
  OCSP_REQUEST_TYPE,
  OCSP_RESPONSE_TYPE,
  OCSP_STATUS,
} from '../../signing';

/** How long a CRL or an OCSP answer may be relied on before a fresh one is fetched. */
const VALIDITY_HOURS = 24;
const MAX_OCSP_REQUEST_BYTES = 8192;

export function sandboxRevocationRouter(services: AppServices): Router {
  const router = express.Router();
  if (services.config.env !== 'sandbox') return router;
  const em = () => services.orm.em.fork();

  router.get('/sandbox/ca/:file', (req, res, next) => {
    const match = /^(root|esp|dsc)\.(crl|cer)$/.exec(String(req.params.file));
    if (!match) {
      next();
      return;
    }
    const [, issuer, kind] = match as unknown as [string, SandboxIssuer, 'crl' | 'cer'];
    sandboxIssuer(services, em(), issuer)
      .then(async (ca) => {
        const now = new Date();
        res.setHeader('Cache-Control', 'no-store');
        if (kind === 'cer') return void res.type('application/pkix-cert').send(new X509Certificate(ca.certificatePem).raw);
        const revoked = issuer === 'dsc' ? await revokedList(em()) : [];
        res
          .type('application/pkix-crl')
          .send(encodeCrl(ca, { now, hours: VALIDITY_HOURS, number: Math.floor(now.getTime() / 1000), revoked }));
      })
      .catch(next);
  });

  const answer = (request: Buffer) =>
    respond(services, em, request).catch((error: unknown) => {
      services.log.error({ err: error }, 'sandbox OCSP responder failed');
      return encodeOcspFailure(OCSP_STATUS.internalError);
    });
  router.post('/sandbox/ocsp', express.raw({ type: OCSP_REQUEST_TYPE, limit: MAX_OCSP_REQUEST_BYTES }), (req, res, next) => {
    if (!Buffer.isBuffer(req.body)) {
      res.status(415).type('text/plain').send(`send ${OCSP_REQUEST_TYPE}`);
      return;
    }
    answer(req.body as Buffer)
      .then((body) => res.type(OCSP_RESPONSE_TYPE).send(body))
      .catch(next);
  });
  // RFC 6960 A.1: GET {url}/{url-encoding of base-64 encoding of the DER OCSPRequest}.
  router.get('/sandbox/ocsp/:request', (req, res, next) => {
    const encoded = String(req.params.request);
    if (encoded.length > (MAX_OCSP_REQUEST_BYTES * 4) / 3) {
      res.type(OCSP_RESPONSE_TYPE).send(encodeOcspFailure(OCSP_STATUS.malformedRequest));
      return;
    }
    answer(Buffer.from(decodeURIComponent(encoded), 'base64'))
      .then((body) => res.type(OCSP_RESPONSE_TYPE).send(body))
      .catch(next);
  });
  return router;
}

async function respond(
  services: AppServices,
  em: () => ReturnType<AppServices['orm']['em']['fork']>,
  request: Buffer,
): Promise<Buffer> {
  let parsed;
  try {
    parsed = decodeOcspRequest(request);
  } catch (error) {
    if (error instanceof DerError) return encodeOcspFailure(OCSP_STATUS.malformedRequest);
    throw error;
  }
  for (const name of SANDBOX_ISSUERS) {
    const issuer = await sandboxIssuer(services, em(), name);
    if (issuedBy(parsed.certIds[0]!, issuer)) {
      const revoked = new Map(name === 'dsc' ? (await revokedList(em())).map((entry) => [entry.serialHex, entry.at]) : []);
      return encodeOcspResponse(issuer, parsed.certIds, {
        now: new Date(),
        hours: VALIDITY_HOURS,
        nonce: parsed.nonce,
        revokedAt: (certId) => revoked.get(serialHexOf(certId.serial)) ?? null,
      });
    }
  }
  return encodeOcspFailure(OCSP_STATUS.unauthorized);
}

/** The DSC CA's revocations, few in a sandbox: read whole for each answer. */
async function revokedList(em: ReturnType<AppServices['orm']['em']['fork']>): Promise<{ serialHex: string; at: Date }[]> {
  const rows = await em.find(SandboxRevokedCertificate, {}, { orderBy: { revokedAt: 'asc' }, limit: 10_000 });
  return rows.map((row) => ({ serialHex: row.serial, at: row.revokedAt }));
}

/** The hex of a serialNumber INTEGER (whole TLV, as a CertID holds it), without leading zeros. */
function serialHexOf(tlv: Buffer): string {
  const length = tlv[1]!;
  const start = length & 0x80 ? 2 + (length & 0x7f) : 2;
  return serialKey(tlv.subarray(start).toString('hex'));
}
