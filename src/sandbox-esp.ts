/**
 * The sandbox ESP gateway alone, on its own port, for any ASP to point at: `npm run sandbox-esp`.
 * No database and no other setting of the service; everything comes from these variables:
 *
 *   SANDBOX_ESP_PORT                  default 4100 (SANDBOX_ESP_HOST, default 127.0.0.1)
 *   SANDBOX_ESP_ISSUER_PFX            PKCS#12 file of the CA that issues the signers' certificates, with
 *   SANDBOX_ESP_ISSUER_PFX_PASSWORD   its password; without it a CA is generated at start
 *   SANDBOX_ESP_RESPONSE_PFX          PKCS#12 file of the key that signs the EsignResp, with
 *   SANDBOX_ESP_RESPONSE_PFX_PASSWORD its password; without it a certificate is issued by the CA at start
 *   SANDBOX_ESP_ASP_CERTS             the trusted ASPs' request-signing certificates: a PEM bundle file, or the PEM
 *   SANDBOX_ESP_TRUST_ANY_ASP=true    accept any request whose signature verifies with the certificate it carries
 *                                     (it then proves only that the request was not altered: sandbox use only)
 *   SANDBOX_ESP_STATE_SECRET          seals the state between the gateway's pages (default: random per start)
 *
 * The CA and response-signing certificates are printed at start: an ASP verifies responses (and 3.2
 * acknowledgements) with the latter. A 3.2 ASP POSTs its request XML to `/` and sends the signer to `/authpage`
 * with `txnref` (the service: ESP_<NAME>_URL = this address, ESP_<NAME>_AUTH_URL = this address + `authpage`).
 */
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { sandboxEspGatewayRouter } from './modules/sandbox';
import { createRootCa, issueSigningCertificate, signingIdentityFromPfx } from './modules/signing';
import { certificatesInPem } from './platform/crypto/pem';

function fromPfx(prefix: string) {
  const file = process.env[`${prefix}_PFX`];
  if (!file) return null;
  return signingIdentityFromPfx({ path: file, password: process.env[`${prefix}_PFX_PASSWORD`] ?? '' });
}

function trustedAspCertificates(): string[] {
  const setting = process.env.SANDBOX_ESP_ASP_CERTS?.trim();
  if (!setting) return [];
  const text = setting.startsWith('-----BEGIN') ? setting : readFileSync(setting, 'utf8');
  return certificatesInPem(text);
}

async function main(): Promise<void> {
  const port = Number(process.env.SANDBOX_ESP_PORT ?? 4100);
  const host = process.env.SANDBOX_ESP_HOST ?? '127.0.0.1';
  const trustAnyAsp = process.env.SANDBOX_ESP_TRUST_ANY_ASP === 'true';
  const aspCertificates = trustedAspCertificates();
  if (aspCertificates.length === 0 && !trustAnyAsp) {
    process.stderr.write('Set SANDBOX_ESP_ASP_CERTS (the ASP certificates to trust) or SANDBOX_ESP_TRUST_ANY_ASP=true.\n');
    process.exit(1);
  }
  const issuer = (await fromPfx('SANDBOX_ESP_ISSUER')) ?? {
    ...createRootCa('Esign Sandbox ESP CA (standalone)', 'Esign Sandbox (not trusted)'),
    chainPems: [],
  };
  const now = Date.now();
  const responseSigner =
    (await fromPfx('SANDBOX_ESP_RESPONSE')) ??
    issueSigningCertificate(
      issuer,
      { commonName: 'Esign Sandbox ESP response signing', organization: 'Esign Sandbox (not trusted)', country: 'IN' },
      { notBefore: new Date(now - 3_600_000), notAfter: new Date(now + 365 * 86_400_000) },
    );

  const app = express();
  app.disable('x-powered-by');
  app.get('/', (_req, res) => {
    res
      .type('text/plain')
      .send(
        'Sandbox eSign Service Provider: POST the form field eSignRequest (CCA eSign API 2.1) here, or the request XML ' +
          '(3.2, application/xml) for its signed acknowledgement; then send the signer to /authpage?txnref=...\n',
      );
  });
  app.use(
    '/',
    sandboxEspGatewayRouter({
      issuer,
      responseSigner,
      trustedAspCertificatesPem: aspCertificates,
      trustAnyAsp,
      stateSecret: process.env.SANDBOX_ESP_STATE_SECRET,
    }),
  );
  const server = app.listen(port, host, () => {
    // The port it got (SANDBOX_ESP_PORT=0 asks the system for a free one).
    const { port: listening } = server.address() as AddressInfo;
    process.stdout.write(
      `Sandbox ESP gateway on http://${host}:${listening}/ (${trustAnyAsp ? 'any ASP' : `${aspCertificates.length} trusted ASP certificate(s)`})\n\n` +
        `Certificates of the signers are issued by:\n${issuer.certificatePem}\n` +
        `EsignResp are signed with (configure it as the ESP certificate):\n${responseSigner.certificatePem}\n`,
    );
  });
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main();
