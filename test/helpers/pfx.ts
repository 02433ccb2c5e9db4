import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';
import { randomSerialNumber } from '../../src/modules/signing/certificates';
import type { TestApp } from './app';

export interface Pkcs12Options {
  password?: string;
  commonName?: string;
  notBefore?: Date;
  notAfter?: Date;
  /** false: a file with the certificate only. */
  includeKey?: boolean;
  /** A CA that issues the certificate (carried in the file too); self-signed without one. */
  issuer?: { privateKeyPem: string; certificatePem: string };
}

/** A real PKCS#12 file: a fresh RSA-2048 key and its certificate (self-signed, or by `issuer`), encrypted with `password`. */
export function makePkcs12(options: Pkcs12Options = {}): Buffer {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  // Positive and minimal: '0' + random hex made a redundant leading zero byte, a DER error OpenSSL
  // refuses now and then (the test failed about once in 30 runs).
  certificate.serialNumber = randomSerialNumber();
  certificate.validity.notBefore = options.notBefore ?? new Date(Date.now() - 86_400_000);
  certificate.validity.notAfter = options.notAfter ?? new Date(Date.now() + 365 * 86_400_000);
  const name = [
    { shortName: 'CN', value: options.commonName ?? 'Acme Legal Pvt Ltd' },
    { shortName: 'O', value: 'Acme Legal Pvt Ltd' },
    { shortName: 'C', value: 'IN' },
  ];
  certificate.setSubject(name);
  const issuer = options.issuer && forge.pki.certificateFromPem(options.issuer.certificatePem);
  certificate.setIssuer(issuer ? issuer.subject.attributes : name);
  certificate.sign(options.issuer ? forge.pki.privateKeyFromPem(options.issuer.privateKeyPem) : key, forge.md.sha256.create());
  const carried = issuer ? [certificate, issuer] : [certificate];
  const p12 = forge.pkcs12.toPkcs12Asn1(options.includeKey === false ? null : key, carried, options.password ?? 'secret', {
    algorithm: '3des',
  });
  return Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary');
}

/** Uploads a fresh PKCS#12 for the user and answers its `pfx_id`. */
export async function uploadTestPfx(app: TestApp, token: string, options: Pkcs12Options = {}): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(makePkcs12(options))]), 'seal.pfx');
  form.append('password', options.password ?? 'secret');
  const response = await fetch(new URL('/api/v1/pfx/upload', app.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const body = (await response.json()) as { data: { pfx_id: string } | null };
  if (response.status !== 200) throw new Error(`pfx upload failed: ${JSON.stringify(body)}`);
  return body.data!.pfx_id;
}
