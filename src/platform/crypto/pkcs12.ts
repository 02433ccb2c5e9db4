import forge from 'node-forge';
import { AppError } from '../errors';

export interface Pkcs12Contents {
  privateKeyPem: string;
  /** The certificate that matches the private key. */
  certificatePem: string;
  /** The other certificates in the file (issuers), PEM. */
  chainPems: string[];
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
}

/**
 * Opens a PKCS#12 (.pfx/.p12) file and returns the signing key with its certificate. Refuses, each with
 * its own code: bytes that are not PKCS#12, a wrong password, a file without a private key (or without the
 * certificate of that key), and a certificate outside its validity period.
 */
export function openPkcs12(bytes: Uint8Array, password: string, now = new Date()): Pkcs12Contents {
  let asn1: forge.asn1.Asn1;
  try {
    asn1 = forge.asn1.fromDer(forge.util.createBuffer(Buffer.from(bytes).toString('binary')));
  } catch (error) {
    throw new AppError('pfx_invalid', { errors: [{ field: 'file', problem: 'not a PKCS#12 (.pfx/.p12) file' }], cause: error });
  }
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    p12 = forge.pkcs12.pkcs12FromAsn1(asn1, false, password);
  } catch (error) {
    const message = (error as Error).message ?? '';
    if (/password|mac|decrypt|invalid/i.test(message)) {
      throw new AppError('pfx_wrong_password', {
        errors: [{ field: 'password', problem: 'the password does not open this file' }],
        cause: error,
      });
    }
    throw new AppError('pfx_invalid', { errors: [{ field: 'file', problem: 'not a readable PKCS#12 file' }], cause: error });
  }
  const keyBags = [
    ...(p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag] ?? []),
    ...(p12.getBags({ bagType: forge.pki.oids.keyBag })[forge.pki.oids.keyBag] ?? []),
  ];
  const key = keyBags.find((bag) => bag.key)?.key as forge.pki.rsa.PrivateKey | undefined;
  if (!key) throw new AppError('pfx_no_private_key', { errors: [{ field: 'file', problem: 'the file holds no private key' }] });
  const certificates = (p12.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? [])
    .map((bag) => bag.cert)
    .filter((cert): cert is forge.pki.Certificate => !!cert);
  const publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  const ownPem = forge.pki.publicKeyToPem(publicKey);
  const own = certificates.find((cert) => forge.pki.publicKeyToPem(cert.publicKey as forge.pki.rsa.PublicKey) === ownPem);
  if (!own) {
    throw new AppError('pfx_no_private_key', {
      errors: [{ field: 'file', problem: 'no certificate in the file matches its private key' }],
    });
  }
  if (now < own.validity.notBefore || now > own.validity.notAfter) {
    throw new AppError('pfx_certificate_expired', {
      errors: [
        {
          field: 'file',
          problem: `the certificate is valid from ${own.validity.notBefore.toISOString()} to ${own.validity.notAfter.toISOString()}`,
        },
      ],
    });
  }
  return {
    privateKeyPem: forge.pki.privateKeyToPem(key),
    certificatePem: forge.pki.certificateToPem(own),
    chainPems: certificates.filter((cert) => cert !== own).map((cert) => forge.pki.certificateToPem(cert)),
    serialNumber: own.serialNumber,
    notBefore: own.validity.notBefore,
    notAfter: own.validity.notAfter,
  };
}
