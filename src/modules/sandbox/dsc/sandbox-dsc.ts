/**
 * The sandbox's DSC CA at work: it issues test Digital Signature Certificates (a key and a certificate a developer
 * loads into a token, SoftHSM2 or a real one) and revokes them, so that `dsc` signing can be tried end to end in the
 * sandbox with certificates that chain to the sandbox root, carry the CCA profile's subject (CN, O, ST, the PAN's
 * SHA-256 as serialNumber) and point to the sandbox's OCSP responder and CRL. Sandbox only; never trusted elsewhere.
 *
 *   POST /sandbox/dsc/certificates {common_name, organisation?, state?, pan?, valid_from?, valid_to?,
 *                                    non_repudiation? (default true), revoked? (default false)}
 *     -> {private_key (PKCS#8 PEM), certificate (PEM), chain [DSC CA, root] (PEM), serial (hex)}
 *   POST /sandbox/dsc/revoke {serial} -> 200 {serial, revoked_at}
 */
import { createHash, X509Certificate } from 'node:crypto';
import express, { type Router } from 'express';
import { AppError } from '../../../platform/errors';
import { sendSuccess } from '../../../platform/rest/envelope';
import type { AppServices } from '../../../platform/services';
import { issueSigningCertificate } from '../../signing';
import { sandboxDscCa, sandboxRevocationPointers } from '../sandbox-ca';
import { SandboxRevokedCertificate, serialKey } from './sandbox-revoked-certificate.entity';

const YEAR_MS = 365 * 86_400_000;
const PAN = /^[A-Z]{5}[0-9]{4}[A-Z]$/;

interface IssueRequest {
  commonName: string;
  organisation?: string;
  state?: string;
  pan?: string;
  validFrom: Date;
  validTo: Date;
  nonRepudiation: boolean;
  revoked: boolean;
}

export function sandboxDscRouter(services: AppServices): Router {
  const router = express.Router();
  if (services.config.env !== 'sandbox') return router;
  const json = express.json({ limit: '4kb' });

  router.post('/sandbox/dsc/certificates', json, (req, res, next) => {
    (async () => {
      const request = issueRequestOf(req.body);
      const em = services.orm.em.fork();
      const ca = await sandboxDscCa(services, em);
      const issued = issueSigningCertificate(
        ca,
        {
          commonName: request.commonName,
          organization: request.organisation,
          state: request.state,
          country: 'IN',
          serialNumber: request.pan ? createHash('sha256').update(request.pan, 'utf8').digest('hex') : undefined,
        },
        { notBefore: request.validFrom, notAfter: request.validTo },
        { revocation: sandboxRevocationPointers(services, 'dsc'), nonRepudiation: request.nonRepudiation },
      );
      const serial = serialKey(new X509Certificate(issued.certificatePem).serialNumber);
      if (request.revoked) await revoke(em, serial);
      sendSuccess(res, {
        private_key: issued.privateKeyPem,
        certificate: issued.certificatePem,
        chain: [ca.certificatePem, ...ca.chainPems],
        serial,
      });
    })().catch(next);
  });

  router.post('/sandbox/dsc/revoke', json, (req, res, next) => {
    (async () => {
      const serial = (req.body as { serial?: unknown } | undefined)?.serial;
      if (typeof serial !== 'string' || !/^[0-9a-fA-F]{1,64}$/.test(serial))
        throw AppError.badRequest([{ field: 'serial', problem: 'the certificate serial number in hex' }]);
      const em = services.orm.em.fork();
      const row = await revoke(em, serialKey(serial));
      sendSuccess(res, { serial: row.serial, revoked_at: row.revokedAt });
    })().catch(next);
  });
  return router;
}

async function revoke(em: ReturnType<AppServices['orm']['em']['fork']>, serial: string): Promise<SandboxRevokedCertificate> {
  await em.upsert(SandboxRevokedCertificate, { serial, revokedAt: new Date() }, { onConflictAction: 'ignore' });
  return em.findOneOrFail(SandboxRevokedCertificate, { serial });
}

function issueRequestOf(body: unknown): IssueRequest {
  const input = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  const problems: { field: string; problem: string }[] = [];
  const optionalText = (field: string, max: number): string | undefined => {
    const value = input[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string' || value.trim() === '' || value.length > max) {
      problems.push({ field, problem: `a text of 1 to ${max} characters` });
      return undefined;
    }
    return value.trim();
  };
  const date = (field: string, fallback: Date): Date => {
    const value = input[field];
    if (value === undefined || value === null) return fallback;
    const parsed = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
    if (Number.isNaN(parsed.getTime())) problems.push({ field, problem: 'an ISO 8601 time' });
    return Number.isNaN(parsed.getTime()) ? fallback : new Date(Math.floor(parsed.getTime() / 1000) * 1000);
  };
  const flag = (field: string, fallback: boolean): boolean => {
    const value = input[field];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'boolean') problems.push({ field, problem: 'true or false' });
    return value === true;
  };
  const commonName = optionalText('common_name', 64);
  if (commonName === undefined && !problems.some((p) => p.field === 'common_name'))
    problems.push({ field: 'common_name', problem: 'required: the holder’s name as the certificate names them' });
  const pan = optionalText('pan', 10)?.toUpperCase();
  if (pan !== undefined && !PAN.test(pan)) problems.push({ field: 'pan', problem: 'five letters, four digits, a letter' });
  const now = Math.floor(Date.now() / 1000) * 1000;
  const validFrom = date('valid_from', new Date(now - 3_600_000));
  const validTo = date('valid_to', new Date(now + 2 * YEAR_MS));
  if (validTo <= validFrom) problems.push({ field: 'valid_to', problem: 'must be after valid_from' });
  const request = {
    commonName: commonName ?? '',
    organisation: optionalText('organisation', 64),
    state: optionalText('state', 64),
    pan,
    validFrom,
    validTo,
    nonRepudiation: flag('non_repudiation', true),
    revoked: flag('revoked', false),
  };
  if (problems.length > 0) throw AppError.badRequest(problems);
  return request;
}
