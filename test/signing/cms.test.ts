import { spawnSync } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import forge from 'node-forge';
import { randomSerialNumber } from '../../src/modules/signing/certificates';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signDetachedCms, type SigningIdentity } from '../../src/modules/signing/cms-sign';
import { verifyDetachedCms } from '../../src/modules/signing/cms-verify';

const OID = {
  signedData: '1.2.840.113549.1.7.2',
  data: '1.2.840.113549.1.7.1',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
};

const DAY = 86_400_000;

interface TestCertificate {
  certificatePem: string;
  /** PKCS#1 ("BEGIN RSA PRIVATE KEY"), as node-forge writes it. */
  privateKeyPem: string;
  key: forge.pki.rsa.PrivateKey;
  subject: forge.pki.CertificateField[];
  notBefore: Date;
  notAfter: Date;
}

type Name = { shortName: string; value: string }[];

/** An RSA-2048 certificate made with node-forge: self-signed when no issuer is given, a CA when `ca`. */
function makeCertificate(subject: Name, options: { issuer?: TestCertificate; ca: boolean }): TestCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  // Positive and minimal: '0' + random hex made a redundant leading zero byte, a DER error OpenSSL
  // refuses now and then (the test failed about once in 30 runs).
  certificate.serialNumber = randomSerialNumber();
  certificate.validity.notBefore = new Date(Date.now() - DAY);
  certificate.validity.notAfter = new Date(Date.now() + 365 * DAY);
  certificate.setSubject(subject);
  const issuer = options.issuer;
  certificate.setIssuer(issuer ? issuer.subject : subject);
  certificate.setExtensions([
    { name: 'basicConstraints', cA: options.ca, critical: true },
    options.ca
      ? { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true }
      : { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  certificate.sign(issuer?.key ?? key, forge.md.sha256.create());
  return {
    certificatePem: forge.pki.certificateToPem(certificate),
    privateKeyPem: forge.pki.privateKeyToPem(key),
    key,
    subject: certificate.subject.attributes,
    notBefore: certificate.validity.notBefore,
    notAfter: certificate.validity.notAfter,
  };
}

function derOf(pem: string): Buffer {
  return new X509Certificate(pem).raw;
}

function sha256(data: Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

function fromDer(bytes: Uint8Array): forge.asn1.Asn1 {
  return forge.asn1.fromDer(forge.util.createBuffer(Buffer.from(bytes).toString('binary')));
}

function children(node: forge.asn1.Asn1): forge.asn1.Asn1[] {
  return node.value as forge.asn1.Asn1[];
}

function bytesOf(node: forge.asn1.Asn1): Buffer {
  return Buffer.from(node.value as string, 'binary');
}

function oidOf(node: forge.asn1.Asn1): string {
  expect(node.type).toBe(forge.asn1.Type.OID);
  return forge.asn1.derToOid(node.value as string);
}

function openssl(args: string[]): { status: number | null; output: string } {
  const run = spawnSync('openssl', args, { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

describe('detached CMS (PAdES B-B)', () => {
  let root: TestCertificate;
  let intermediate: TestCertificate;
  let signer: TestCertificate;
  let unrelatedRoot: TestCertificate;
  let identity: SigningIdentity;
  const content = Buffer.from('%PDF-1.7 the bytes a ByteRange covers\n'.repeat(200));
  let cms: Uint8Array;
  let dir: string;

  beforeAll(async () => {
    root = makeCertificate(
      [
        { shortName: 'CN', value: 'Test Root CA' },
        { shortName: 'O', value: 'Esign Test' },
        { shortName: 'C', value: 'IN' },
      ],
      {
        ca: true,
      },
    );
    intermediate = makeCertificate(
      [
        { shortName: 'CN', value: 'Test Signing CA' },
        { shortName: 'C', value: 'IN' },
      ],
      { issuer: root, ca: true },
    );
    signer = makeCertificate(
      [
        { shortName: 'C', value: 'IN' },
        { shortName: 'ST', value: 'Karnataka' },
        { shortName: 'CN', value: 'Asha Rao' },
      ],
      { issuer: intermediate, ca: false },
    );
    unrelatedRoot = makeCertificate([{ shortName: 'CN', value: 'Someone Else Root' }], { ca: true });
    identity = {
      privateKeyPem: signer.privateKeyPem,
      certificatePem: signer.certificatePem,
      chainPems: [intermediate.certificatePem],
    };
    cms = await signDetachedCms(content, identity);
    dir = await mkdtemp(path.join(os.tmpdir(), 'cms-test-'));
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('verifies in-process: signature, digest, signing-certificate-v2 and the chain to the trusted root', async () => {
    const result = await verifyDetachedCms(cms, content, { trustedRootsPem: [root.certificatePem] });
    expect(result).toMatchObject({
      signatureValid: true,
      digestValid: true,
      signingCertificateV2Valid: true,
      chainValid: true,
      signerSubject: 'CN=Asha Rao, ST=Karnataka, C=IN',
      problems: [],
    });
    expect(derOf(result.signerCertificatePem)).toEqual(derOf(signer.certificatePem));
    expect(result.certificatesPem.map(derOf).sort(Buffer.compare)).toEqual(
      [signer.certificatePem, intermediate.certificatePem].map(derOf).sort(Buffer.compare),
    );
  });

  it('reports chainValid null without roots and false with an unrelated root', async () => {
    const noRoots = await verifyDetachedCms(cms, content);
    expect(noRoots.chainValid).toBeNull();
    expect(noRoots.problems).toEqual([]);

    const unrelated = await verifyDetachedCms(cms, content, { trustedRootsPem: [unrelatedRoot.certificatePem] });
    expect(unrelated).toMatchObject({
      signatureValid: true,
      digestValid: true,
      signingCertificateV2Valid: true,
      chainValid: false,
    });
    expect(unrelated.problems.join('\n')).toMatch(/does not reach a trusted root.*Test Signing CA/);
  });

  it('checks certificate validity at the signing time given by `at`', async () => {
    const roots = [root.certificatePem];
    expect((await verifyDetachedCms(cms, content, { trustedRootsPem: roots, at: new Date() })).chainValid).toBe(true);
    const before = await verifyDetachedCms(cms, content, {
      trustedRootsPem: roots,
      at: new Date(signer.notBefore.getTime() - DAY),
    });
    expect(before.chainValid).toBe(false);
    expect(before.problems.join('\n')).toMatch(/"CN=Asha Rao, ST=Karnataka, C=IN" was not valid at/);
    const after = await verifyDetachedCms(cms, content, {
      trustedRootsPem: roots,
      at: new Date(signer.notAfter.getTime() + DAY),
    });
    expect(after.chainValid).toBe(false);
    expect(after.signatureValid && after.digestValid).toBe(true);
  });

  it('notices one changed content byte (digest) and one changed signature byte (signature)', async () => {
    const tamperedContent = Buffer.from(content);
    tamperedContent[100] ^= 0x01;
    const onContent = await verifyDetachedCms(cms, tamperedContent, { trustedRootsPem: [root.certificatePem] });
    expect(onContent).toMatchObject({ digestValid: false, signatureValid: true, chainValid: true });
    expect(onContent.problems).toEqual(['messageDigest does not match the content (the signed bytes were changed)']);

    // The signature value is the last field of the last SignerInfo, so it ends the DER.
    const tamperedSignature = Buffer.from(cms);
    tamperedSignature[tamperedSignature.length - 10] ^= 0x01;
    const onSignature = await verifyDetachedCms(tamperedSignature, content);
    expect(onSignature).toMatchObject({ digestValid: true, signatureValid: false, signingCertificateV2Valid: true });
    expect(onSignature.problems).toEqual(['the signature does not verify with the signer certificate']);
  });

  it('accepts the zero padding of a PDF /Contents and reports a malformed CMS instead of throwing', async () => {
    const padded = Buffer.concat([cms, Buffer.alloc(2000)]);
    expect((await verifyDetachedCms(padded, content)).signatureValid).toBe(true);

    const truncated = await verifyDetachedCms(cms.subarray(0, cms.length - 40), content);
    expect(truncated).toMatchObject({ signatureValid: false, digestValid: false, signerSubject: '' });
    expect(truncated.problems[0]).toMatch(/^malformed CMS: /);
    expect((await verifyDetachedCms(Buffer.from('not a cms'), content)).problems[0]).toMatch(/^malformed CMS: /);
  });

  it('encodes SignedData as PAdES B-B wants it (decoded with node-forge)', () => {
    const contentInfo = fromDer(cms);
    expect(oidOf(children(contentInfo)[0])).toBe(OID.signedData);
    const [version, digestAlgorithms, encapContentInfo, certificates, signerInfos] = children(
      children(children(contentInfo)[1])[0],
    );
    expect(forge.asn1.derToInteger(version.value as string)).toBe(1);
    expect(children(digestAlgorithms)).toHaveLength(1);
    expect(oidOf(children(children(digestAlgorithms)[0])[0])).toBe(OID.sha256);

    // Detached: eContentType id-data and no eContent.
    expect(children(encapContentInfo)).toHaveLength(1);
    expect(oidOf(children(encapContentInfo)[0])).toBe(OID.data);

    expect(certificates.tagClass).toBe(forge.asn1.Class.CONTEXT_SPECIFIC);
    expect(certificates.type).toBe(0);
    expect(children(certificates)).toHaveLength(1 + identity.chainPems.length);

    expect(children(signerInfos)).toHaveLength(1);
    const [siVersion, sid, digestAlgorithm, signedAttrs, signatureAlgorithm, signature] = children(children(signerInfos)[0]);
    expect(forge.asn1.derToInteger(siVersion.value as string)).toBe(1);
    const signerCertificate = forge.pki.certificateFromPem(signer.certificatePem);
    const [sidIssuer, sidSerial] = children(sid);
    expect(forge.asn1.toDer(sidIssuer).getBytes()).toBe(
      forge.asn1.toDer(forge.pki.distinguishedNameToAsn1(signerCertificate.issuer)).getBytes(),
    );
    expect(forge.util.bytesToHex(sidSerial.value as string)).toBe(signerCertificate.serialNumber);
    expect(oidOf(children(digestAlgorithm)[0])).toBe(OID.sha256);
    expect(children(digestAlgorithm)).toHaveLength(1); // SHA-2 parameters absent (RFC 5754)
    expect(oidOf(children(signatureAlgorithm)[0])).toBe(OID.sha256WithRSAEncryption);
    expect(children(signatureAlgorithm)[1].type).toBe(forge.asn1.Type.NULL);
    expect(bytesOf(signature)).toHaveLength(256);

    // Signed attributes: [0] IMPLICIT, exactly content-type, message-digest and signing-certificate-v2, in DER order.
    expect(signedAttrs.tagClass).toBe(forge.asn1.Class.CONTEXT_SPECIFIC);
    expect(signedAttrs.type).toBe(0);
    const attributes = new Map(
      children(signedAttrs).map((attribute) => [oidOf(children(attribute)[0]), children(children(attribute)[1])]),
    );
    expect([...attributes.keys()].sort()).toEqual([OID.contentType, OID.messageDigest, OID.signingCertificateV2].sort());
    expect(attributes.has(OID.signingTime)).toBe(false);
    const encodings = children(signedAttrs).map((attribute) => Buffer.from(forge.asn1.toDer(attribute).getBytes(), 'binary'));
    expect(encodings).toEqual([...encodings].sort(Buffer.compare));

    expect(attributes.get(OID.contentType)!.map(oidOf)).toEqual([OID.data]);
    expect(attributes.get(OID.messageDigest)!.map(bytesOf)).toEqual([sha256(content)]);

    const [signingCertificateV2] = attributes.get(OID.signingCertificateV2)!;
    const [certs] = children(signingCertificateV2);
    expect(children(certs)).toHaveLength(1);
    const [certHash, issuerSerial, ...more] = children(children(certs)[0]);
    expect(more).toEqual([]);
    expect(certHash.type).toBe(forge.asn1.Type.OCTETSTRING); // hashAlgorithm omitted: SHA-256 is the default
    expect(bytesOf(certHash)).toEqual(sha256(derOf(signer.certificatePem)));
    const [generalNames, serial] = children(issuerSerial);
    const [directoryName] = children(generalNames);
    expect(directoryName.tagClass).toBe(forge.asn1.Class.CONTEXT_SPECIFIC);
    expect(directoryName.type).toBe(4);
    expect(forge.asn1.toDer(children(directoryName)[0]).getBytes()).toBe(forge.asn1.toDer(sidIssuer).getBytes());
    expect(serial.value).toBe(sidSerial.value);
  });

  it('carries the whole chain given (root included) and de-duplicates the signer', async () => {
    const withRoot = await signDetachedCms(content, {
      ...identity,
      chainPems: [intermediate.certificatePem, root.certificatePem, signer.certificatePem],
    });
    const certificates = children(children(children(children(fromDer(withRoot))[1])[0])[3]);
    expect(certificates).toHaveLength(3);
    const result = await verifyDetachedCms(withRoot, content, { trustedRootsPem: [root.certificatePem] });
    expect(result.certificatesPem).toHaveLength(3);
    expect(result.chainValid).toBe(true);
  });

  it('signs with PKCS#1 and PKCS#8 private keys alike, and refuses a key that is not the certificate’s', async () => {
    expect(signer.privateKeyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    const pkcs8 = createPrivateKey(signer.privateKeyPem).export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(pkcs8).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    for (const privateKeyPem of [signer.privateKeyPem, pkcs8]) {
      const signed = await signDetachedCms(content, { ...identity, privateKeyPem });
      const result = await verifyDetachedCms(signed, content, { trustedRootsPem: [root.certificatePem] });
      expect(result.problems).toEqual([]);
      expect(result.signatureValid && result.digestValid && result.signingCertificateV2Valid && result.chainValid).toBe(true);
    }
    await expect(signDetachedCms(content, { ...identity, privateKeyPem: root.privateKeyPem })).rejects.toThrow(/does not belong/);
  });

  it('verifies with `openssl cms -verify` (interop)', async () => {
    if (!hasOpenssl) {
      console.warn('openssl is not installed: the CMS interop check with `openssl cms -verify` was not run');
      return;
    }
    const files = {
      cms: path.join(dir, 'sig.der'),
      content: path.join(dir, 'data.bin'),
      tampered: path.join(dir, 'tampered.bin'),
      ca: path.join(dir, 'ca.pem'),
      other: path.join(dir, 'other.pem'),
    };
    const tampered = Buffer.from(content);
    tampered[0] ^= 0x01;
    await writeFile(files.cms, cms);
    await writeFile(files.content, content);
    await writeFile(files.tampered, tampered);
    await writeFile(files.ca, root.certificatePem);
    await writeFile(files.other, unrelatedRoot.certificatePem);
    const verify = (data: string, extra: string[]) =>
      openssl(['cms', '-verify', '-binary', '-inform', 'DER', '-in', files.cms, '-content', data, '-out', '/dev/null', ...extra]);

    const full = verify(files.content, ['-CAfile', files.ca, '-purpose', 'any']);
    expect(full.output).toMatch(/Verification successful/);
    expect(full.status).toBe(0);
    expect(verify(files.content, ['-noverify']).status).toBe(0);
    expect(verify(files.tampered, ['-noverify']).status).not.toBe(0);
    expect(verify(files.content, ['-CAfile', files.other, '-purpose', 'any']).status).not.toBe(0);

    // OpenSSL's own reading of the structure.
    const printed = openssl(['cms', '-cmsout', '-print', '-inform', 'DER', '-in', files.cms]).output;
    expect(printed).toMatch(/id-smime-aa-signingCertificateV2/);
    expect(printed).not.toMatch(/signingTime/);
  });
});
