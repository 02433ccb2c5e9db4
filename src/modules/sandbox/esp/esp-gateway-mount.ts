import { createHmac } from 'node:crypto';
import express, { type Router } from 'express';
import type { AppServices } from '../../../platform/services';
import { aspIdentity } from '../../signing';
import { sandboxEspCa, sandboxEspResponder, sandboxRevocationPointers } from '../sandbox-ca';
import { sandboxEspGatewayRouter } from './sandbox-esp-gateway';

/**
 * The built-in sandbox ESP's gateway (sandbox, or ALLOW_SANDBOX_ESP): the same protocol a real ESP speaks, mounted
 * at /sandbox/esp. Its keys live in the database, so the router is made on its first request; every process
 * seals the gateway's page state with the same secret (derived from SECRETS_ENCRYPTION_KEY).
 */
export function sandboxEspGateway(services: AppServices): Router {
  const router = express.Router();
  const sandbox = services.config.esps.sandbox;
  if (!sandbox?.builtIn) return router;
  let gateway: Promise<Router> | undefined;
  const build = async () => {
    const em = services.orm.em.fork();
    const [issuer, responder, asp] = await Promise.all([
      sandboxEspCa(services, em),
      sandboxEspResponder(services, em),
      aspIdentity(services, em, sandbox),
    ]);
    return sandboxEspGatewayRouter({
      issuer,
      responseSigner: responder,
      trustedAspCertificatesPem: [asp.certificatePem],
      stateSecret: createHmac('sha256', services.config.secretsEncryptionKey).update('sandbox-esp-gateway').digest('hex'),
      revocation: sandboxRevocationPointers(services, 'esp'),
    });
  };
  router.use('/sandbox/esp', (req, res, next) => {
    gateway ??= build().catch((error: unknown) => {
      gateway = undefined;
      throw error;
    });
    gateway.then((built) => built(req, res, next), next);
  });
  return router;
}
