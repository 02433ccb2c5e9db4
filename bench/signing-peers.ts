/**
 * The protocol peers a signing benchmark talks to over HTTP: a root CA, a TSA and a signer it issued, and a local
 * RFC 3161 TSA and OCSP responder answering for them (as the service's sandbox answers).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRootCa, issueSigningCertificate } from '../src/modules/signing/certificates';
import type { SigningIdentity } from '../src/modules/signing/cms-sign';
import { decodeOcspRequest, encodeOcspResponse } from '../src/modules/signing/revocation/revocation-protocol';
import { answerTimestampRequest } from '../src/modules/sandbox/tsa/sandbox-tsa';
import { tsaStamper } from '../src/modules/signing/tsa/tsa-client';

/** A root CA, a TSA and a signer it issued, and a local TSA and OCSP responder answering for them over HTTP. */
export async function benchSigningPeers() {
  const root = createRootCa('Bench Root', 'Bench');
  const tsaCertificate = issueSigningCertificate(
    root,
    { commonName: 'Bench TSA' },
    { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000) },
    { purpose: 'timestamps' },
  );
  const rootIdentity = { ...root, chainPems: [] };
  const tsa = { ...tsaCertificate, chainPems: [root.certificatePem] };
  const { server, url } = await peers(rootIdentity, tsa);
  const signerCertificate = issueSigningCertificate(
    root,
    { commonName: 'Bench Signer' },
    { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000) },
    { revocation: { ocspUrl: `${url}/ocsp`, crlUrl: `${url}/crl` } },
  );
  const signer: SigningIdentity = { ...signerCertificate, chainPems: [root.certificatePem] };
  const stamper = tsaStamper({ url: `${url}/tsa`, timeoutMs: 10_000, retries: 0 });
  return { root, tsa, signer, stamper, url, server, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** A local TSA and OCSP responder, as the service's sandbox answers them, reached over HTTP. */
async function peers(root: SigningIdentity, tsa: SigningIdentity) {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.url === '/tsa')
        res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(answerTimestampRequest(tsa, body));
      else {
        const request = decodeOcspRequest(body);
        res
          .writeHead(200, { 'content-type': 'application/ocsp-response' })
          .end(encodeOcspResponse(root, request.certIds, { now: new Date(), hours: 24, nonce: request.nonce }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let shared: Promise<string> | undefined;

/**
 * The TSA every benchmark's service stamps its signatures with (production insists on TSA_URL): one for the whole
 * run, in this process, never keeping it alive on its own.
 */
export function benchTsaUrl(): Promise<string> {
  shared ??= benchSigningPeers().then(({ url, server }) => {
    server.unref();
    return `${url}/tsa`;
  });
  return shared;
}
