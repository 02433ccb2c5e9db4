import { X509Certificate, createPrivateKey, sign, verify } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aadhaarSubject, readAadhaarCertDetails, type AadhaarIdentity } from '../../src/modules/signing/aadhaar-certificate';
import {
  EKU_ADOBE_AUTHENTIC_DOCUMENTS,
  EKU_DOCUMENT_SIGNING,
  createRootCa,
  describeCertificate,
  issueSigningCertificate,
  keyMatchesCertificate,
  randomSerialNumber,
  subjectString,
  type KeyAndCertificate,
  type SubjectFields,
} from '../../src/modules/signing/certificates';

const MINUTE = 60_000;

/** Validity instants are whole seconds: X.509 has no finer precision. */
function at(iso: string): Date {
  return new Date(iso);
}

function extension<T>(pem: string, name: string): (T & { critical?: boolean }) | null {
  return forge.pki.certificateFromPem(pem).getExtension(name) as (T & { critical?: boolean }) | null;
}

function signsAndVerifies(pair: KeyAndCertificate): boolean {
  const message = Buffer.from('a document digest to sign');
  const signature = sign('sha256', message, createPrivateKey(pair.privateKeyPem));
  return verify('sha256', message, new X509Certificate(pair.certificatePem).publicKey, signature);
}

const identity: AadhaarIdentity = {
  name: 'José Kumar',
  state: 'Tamil Nadu',
  pinCode: '600001',
  yearOfBirth: '1987',
  gender: 'M',
  aadhaarLast4: '0412',
};

const openssl = spawnSync('openssl', ['version'], { encoding: 'utf8' });
const hasOpenssl = openssl.status === 0;

describe('certificates', () => {
  let root: KeyAndCertificate;
  let espCa: KeyAndCertificate;
  let documentSigner: KeyAndCertificate;
  let aadhaarSigner: KeyAndCertificate;
  const serials: string[] = [];
  const shortLived = { notBefore: at('2026-03-01T10:00:00Z'), notAfter: at('2026-03-01T10:10:00Z') };

  beforeAll(() => {
    root = createRootCa('Esign Sandbox Root CA', 'Esign Platform (sandbox)');
    // A non-ASCII issuer name: the issued certificate's issuer must still match the CA's subject byte for byte.
    espCa = createRootCa('Sandbox ESP CA — Aadhaar eKYC-OTP', 'Sandbox ESP');
    documentSigner = issueSigningCertificate(
      root,
      {
        commonName: 'Esign Platform Document Signer',
        organization: 'Esign Platform',
        organizationalUnit: ['Signing', 'Sandbox'],
        country: 'IN',
      },
      { notBefore: at('2026-01-01T00:00:00Z'), notAfter: at('2028-01-01T00:00:00Z') },
    );
    aadhaarSigner = issueSigningCertificate(espCa, aadhaarSubject(identity), shortLived);
    for (const pair of [root, espCa, documentSigner, aadhaarSigner])
      serials.push(new X509Certificate(pair.certificatePem).serialNumber);
  });

  describe('createRootCa', () => {
    it('is a self-signed CA with keyCertSign and cRLSign, valid for about ten years', () => {
      const cert = new X509Certificate(root.certificatePem);
      expect(cert.ca).toBe(true);
      expect(cert.checkIssued(cert)).toBe(true);
      expect(cert.verify(cert.publicKey)).toBe(true);
      expect(cert.subject).toBe(cert.issuer);
      expect(subjectString(root.certificatePem)).toBe('CN=Esign Sandbox Root CA, O=Esign Platform (sandbox)');

      const basic = extension<{ cA: boolean }>(root.certificatePem, 'basicConstraints');
      expect(basic).toMatchObject({ cA: true, critical: true });
      const usage = extension<Record<string, boolean>>(root.certificatePem, 'keyUsage');
      expect(usage).toMatchObject({ keyCertSign: true, cRLSign: true, digitalSignature: false, critical: true });
      expect(extension(root.certificatePem, 'subjectKeyIdentifier')).not.toBeNull();

      const { notBefore, notAfter } = describeCertificate(root.certificatePem);
      const years = (notAfter.getTime() - notBefore.getTime()) / (365.25 * 24 * 60 * MINUTE);
      expect(years).toBeGreaterThan(9.9);
      expect(years).toBeLessThan(10.1);
      const now = Date.now();
      expect(notBefore.getTime()).toBeLessThan(now);
      expect(notAfter.getTime()).toBeGreaterThan(now);
    });

    it('is RSA 2048 signed with SHA-256, and its PEMs round-trip (the key is the certificate key)', () => {
      const forgeCert = forge.pki.certificateFromPem(root.certificatePem);
      expect(forgeCert.siginfo.algorithmOid).toBe(forge.pki.oids.sha256WithRSAEncryption);
      expect((forgeCert.publicKey as forge.pki.rsa.PublicKey).n.bitLength()).toBe(2048);
      expect(forge.pki.certificateToPem(forgeCert).trim()).toBe(root.certificatePem.trim());
      expect(new X509Certificate(root.certificatePem).checkPrivateKey(createPrivateKey(root.privateKeyPem))).toBe(true);
      expect(keyMatchesCertificate(root.privateKeyPem, root.certificatePem)).toBe(true);
      expect(keyMatchesCertificate(espCa.privateKeyPem, root.certificatePem)).toBe(false);
      expect(signsAndVerifies(root)).toBe(true);
    });
  });

  describe('issueSigningCertificate', () => {
    it("verifies against the issuer's public key and not against another CA's", () => {
      const cert = new X509Certificate(documentSigner.certificatePem);
      const issuer = new X509Certificate(root.certificatePem);
      expect(cert.checkIssued(issuer)).toBe(true);
      expect(cert.verify(issuer.publicKey)).toBe(true);
      expect(cert.verify(new X509Certificate(espCa.certificatePem).publicKey)).toBe(false);
      expect(cert.checkIssued(new X509Certificate(espCa.certificatePem))).toBe(false);
      expect(
        forge.pki.certificateFromPem(root.certificatePem).verify(forge.pki.certificateFromPem(documentSigner.certificatePem)),
      ).toBe(true);
    });

    it('chains to a CA whose name is not ASCII', () => {
      const cert = new X509Certificate(aadhaarSigner.certificatePem);
      const issuer = new X509Certificate(espCa.certificatePem);
      expect(cert.checkIssued(issuer)).toBe(true);
      expect(cert.verify(issuer.publicKey)).toBe(true);
      expect(cert.issuer).toBe(issuer.subject);
      expect(describeCertificate(aadhaarSigner.certificatePem).issuer).toBe(
        'CN=Sandbox ESP CA — Aadhaar eKYC-OTP, O=Sandbox ESP',
      );
    });

    it('is not a CA and carries the document-signing key usages', () => {
      const cert = new X509Certificate(documentSigner.certificatePem);
      expect(cert.ca).toBe(false);
      // Node's X509Certificate.keyUsage lists the extended key usages.
      expect([...(cert.keyUsage ?? [])].sort()).toEqual([EKU_ADOBE_AUTHENTIC_DOCUMENTS, EKU_DOCUMENT_SIGNING].sort());

      expect(extension<{ cA: boolean }>(documentSigner.certificatePem, 'basicConstraints')).toMatchObject({
        cA: false,
        critical: true,
      });
      const usage = extension<Record<string, boolean>>(documentSigner.certificatePem, 'keyUsage');
      expect(usage).toMatchObject({
        digitalSignature: true,
        nonRepudiation: true,
        keyCertSign: false,
        cRLSign: false,
        keyEncipherment: false,
        critical: true,
      });
      const eku = extension<Record<string, boolean>>(documentSigner.certificatePem, 'extKeyUsage');
      expect(eku).toMatchObject({ [EKU_DOCUMENT_SIGNING]: true, [EKU_ADOBE_AUTHENTIC_DOCUMENTS]: true });
    });

    it("has a subjectKeyIdentifier and an authorityKeyIdentifier equal to the issuer's", () => {
      const ski = extension<{ subjectKeyIdentifier: string }>(documentSigner.certificatePem, 'subjectKeyIdentifier');
      const rootSki = extension<{ subjectKeyIdentifier: string }>(root.certificatePem, 'subjectKeyIdentifier');
      expect(ski?.subjectKeyIdentifier).toMatch(/^[0-9a-f]{40}$/);
      expect(ski?.subjectKeyIdentifier).not.toBe(rootSki?.subjectKeyIdentifier);

      // forge does not decode authorityKeyIdentifier: read [0] keyIdentifier from the extension value.
      const aki = extension<{ value: string }>(documentSigner.certificatePem, 'authorityKeyIdentifier');
      const sequence = forge.asn1.fromDer(aki!.value);
      const keyIdentifier = (sequence.value as forge.asn1.Asn1[]).find(
        (part) => part.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && part.type === 0,
      );
      expect(forge.util.bytesToHex(keyIdentifier!.value as string)).toBe(rootSki?.subjectKeyIdentifier);
    });

    it('has exactly the requested validity, here a short-lived one of ten minutes', () => {
      const description = describeCertificate(aadhaarSigner.certificatePem);
      expect(description.notBefore.toISOString()).toBe('2026-03-01T10:00:00.000Z');
      expect(description.notAfter.toISOString()).toBe('2026-03-01T10:10:00.000Z');
      expect(description.notAfter.getTime() - description.notBefore.getTime()).toBe(10 * MINUTE);

      const cert = new X509Certificate(documentSigner.certificatePem);
      expect(new Date(cert.validFrom).toISOString()).toBe('2026-01-01T00:00:00.000Z');
      expect(new Date(cert.validTo).toISOString()).toBe('2028-01-01T00:00:00.000Z');
    });

    it('a validity whose end is not after its start is refused', () => {
      const when = at('2026-03-01T10:00:00Z');
      expect(() => issueSigningCertificate(root, { commonName: 'x' }, { notBefore: when, notAfter: when })).toThrow(RangeError);
      expect(() =>
        issueSigningCertificate(root, { commonName: 'x' }, { notBefore: when, notAfter: new Date('not a date') }),
      ).toThrow(RangeError);
    });

    it('an issuer whose key does not match its certificate is refused', () => {
      const mixed = { privateKeyPem: espCa.privateKeyPem, certificatePem: root.certificatePem };
      expect(() => issueSigningCertificate(mixed, { commonName: 'x' }, shortLived)).toThrow(/does not match/);
    });

    it('its PEMs round-trip: the private key is the key of the certificate', () => {
      for (const pair of [documentSigner, aadhaarSigner]) {
        expect(pair.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
        expect(pair.certificatePem).toMatch(/^-----BEGIN CERTIFICATE-----/);
        expect(new X509Certificate(pair.certificatePem).checkPrivateKey(createPrivateKey(pair.privateKeyPem))).toBe(true);
        expect(signsAndVerifies(pair)).toBe(true);
        const reparsed = forge.pki.certificateToPem(forge.pki.certificateFromPem(pair.certificatePem));
        expect(new X509Certificate(reparsed).fingerprint256).toBe(new X509Certificate(pair.certificatePem).fingerprint256);
      }
      // A key from another pair does not verify.
      const message = Buffer.from('x');
      const signature = sign('sha256', message, createPrivateKey(documentSigner.privateKeyPem));
      expect(verify('sha256', message, new X509Certificate(aadhaarSigner.certificatePem).publicKey, signature)).toBe(false);
    });

    it('accepts an issuer key in PKCS#1 form (as openPkcs12 returns it)', () => {
      const pkcs1 = forge.pki.privateKeyToPem(forge.pki.privateKeyFromPem(root.privateKeyPem));
      expect(pkcs1).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
      const issued = issueSigningCertificate(
        { privateKeyPem: pkcs1, certificatePem: root.certificatePem },
        { commonName: 'PKCS#1' },
        shortLived,
      );
      serials.push(new X509Certificate(issued.certificatePem).serialNumber);
      expect(new X509Certificate(issued.certificatePem).verify(new X509Certificate(root.certificatePem).publicKey)).toBe(true);
      expect(subjectString(issued.certificatePem)).toBe('CN=PKCS#1');
    });

    it('writes the subject fields in order, with C and serialNumber as PrintableString and the rest as UTF8String', () => {
      expect(subjectString(documentSigner.certificatePem)).toBe(
        'CN=Esign Platform Document Signer, OU=Sandbox, OU=Signing, O=Esign Platform, C=IN',
      );
      const attributes = forge.pki.certificateFromPem(aadhaarSigner.certificatePem).subject.attributes;
      expect(attributes.map((a) => [a.type, a.valueTagClass])).toEqual([
        ['2.5.4.6', forge.asn1.Type.PRINTABLESTRING],
        ['2.5.4.8', forge.asn1.Type.UTF8],
        ['2.5.4.17', forge.asn1.Type.UTF8],
        ['2.5.4.10', forge.asn1.Type.UTF8],
        ['2.5.4.65', forge.asn1.Type.UTF8],
        ['2.5.4.5', forge.asn1.Type.PRINTABLESTRING],
        ['2.5.4.3', forge.asn1.Type.UTF8],
      ]);
      // The common name is stored as UTF-8 bytes (not Latin-1, not double-encoded).
      const cn = attributes.find((a) => a.type === '2.5.4.3')!;
      expect(Buffer.from(cn.value as string, 'binary').toString('hex')).toBe(Buffer.from('José Kumar', 'utf8').toString('hex'));
    });

    it('refuses subject values that cannot be encoded as required', () => {
      const issue = (subject: Parameters<typeof issueSigningCertificate>[1]) => () =>
        issueSigningCertificate(root, subject, shortLived);
      expect(issue({ commonName: '' })).toThrow(RangeError);
      expect(issue({ commonName: 'x', country: 'India' })).toThrow(RangeError);
      expect(issue({ commonName: 'x', serialNumber: 'ABC;123' })).toThrow(RangeError);
      expect(issue({ commonName: 'x', state: '  ' })).toThrow(RangeError);
    });

    it('describeCertificate reports subject, issuer, serial, validity and SHA-256 fingerprint', () => {
      const cert = new X509Certificate(documentSigner.certificatePem);
      const description = describeCertificate(documentSigner.certificatePem);
      expect(description).toEqual({
        subject: subjectString(documentSigner.certificatePem),
        issuer: 'CN=Esign Sandbox Root CA, O=Esign Platform (sandbox)',
        serialNumber: cert.serialNumber.toLowerCase(),
        notBefore: new Date('2026-01-01T00:00:00Z'),
        notAfter: new Date('2028-01-01T00:00:00Z'),
        sha256Fingerprint: cert.fingerprint256,
      });
      expect(description.sha256Fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
      expect(description.serialNumber).toBe(forge.pki.certificateFromPem(documentSigner.certificatePem).serialNumber);
    });
  });

  describe('serial numbers', () => {
    it('are 16-byte positive integers with a minimal DER encoding', () => {
      for (let i = 0; i < 10_000; i++) {
        const serial = randomSerialNumber();
        expect(serial).toMatch(/^[4-7][0-9a-f]{31}$/);
      }
      for (const serial of serials) expect(serial).toMatch(/^[4-7][0-9A-F]{31}$/);
    });

    it('are unique across many generations and issuances', { timeout: 180_000 }, () => {
      const generated = new Set<string>();
      for (let i = 0; i < 100_000; i++) generated.add(randomSerialNumber());
      expect(generated.size).toBe(100_000);

      const issued = [...serials];
      for (let i = 0; i < 30; i++) {
        const pair = issueSigningCertificate(i % 2 ? root : espCa, { commonName: `Signer ${i}` }, shortLived);
        issued.push(new X509Certificate(pair.certificatePem).serialNumber);
      }
      expect(new Set(issued).size).toBe(issued.length);
      expect(issued.length).toBeGreaterThanOrEqual(34);
    });
  });

  describe('Aadhaar eSign profile', () => {
    it('aadhaarSubject maps the identity onto the documented subject fields', () => {
      expect(aadhaarSubject(identity)).toEqual({
        country: 'IN',
        state: 'Tamil Nadu',
        postalCode: '600001',
        organization: 'Personal',
        pseudonym: 'YOB:1987;G:M',
        serialNumber: 'XXXXXXXX0412',
        commonName: 'José Kumar',
      });
      expect(subjectString(aadhaarSigner.certificatePem)).toBe(
        'CN=José Kumar, serialNumber=XXXXXXXX0412, pseudonym=YOB:1987\\;G:M, O=Personal, postalCode=600001, ST=Tamil Nadu, C=IN',
      );
    });

    it('readAadhaarCertDetails gives back exactly the identity, with the number masked', () => {
      expect(readAadhaarCertDetails(aadhaarSigner.certificatePem)).toEqual({
        name: 'José Kumar',
        country: 'IN',
        state: 'Tamil Nadu',
        pin_code: '600001',
        aadhaar: 'XXXXXXXX0412',
        year_of_birth: '1987',
        gender: 'M',
      });
    });

    it('round-trips names with spaces, non-ASCII letters and punctuation, and every gender', () => {
      const identities: AadhaarIdentity[] = [
        {
          name: 'Ramesh  Chandra  Iyer',
          state: 'Karnataka',
          pinCode: '560001',
          yearOfBirth: '1960',
          gender: 'M',
          aadhaarLast4: '9999',
        },
        { name: 'Zoë Dsouza-Fernandes', state: 'Goa', pinCode: '403001', yearOfBirth: '2001', gender: 'F', aadhaarLast4: '0000' },
        { name: 'राजेश कुमार', state: 'उत्तर प्रदेश', pinCode: '226001', yearOfBirth: '1975', gender: 'T', aadhaarLast4: '1234' },
        {
          name: 'K. O\'Brien, Jr.; "Kay"',
          state: 'Jammu & Kashmir',
          pinCode: '190001',
          yearOfBirth: '1999',
          gender: 'F',
          aadhaarLast4: '5678',
        },
      ];
      for (const person of identities) {
        const pair = issueSigningCertificate(espCa, aadhaarSubject(person), shortLived);
        expect(readAadhaarCertDetails(pair.certificatePem)).toEqual({
          name: person.name,
          country: 'IN',
          state: person.state,
          pin_code: person.pinCode,
          aadhaar: `XXXXXXXX${person.aadhaarLast4}`,
          year_of_birth: person.yearOfBirth,
          gender: person.gender,
        });
      }
    });

    it('aadhaarSubject refuses an identity that does not fit the profile', () => {
      const bad: Partial<AadhaarIdentity>[] = [
        { name: ' ' },
        { state: '' },
        { pinCode: '60001' },
        { pinCode: '060001' },
        { yearOfBirth: '87' },
        { gender: 'X' as 'M' },
        { aadhaarLast4: '412' },
        { aadhaarLast4: '123456789012' },
      ];
      for (const change of bad) expect(() => aadhaarSubject({ ...identity, ...change })).toThrow(RangeError);
    });

    describe('readAadhaarCertDetails reads any ESP certificate for what its subject carries', () => {
      const issued = (subject: SubjectFields) => issueSigningCertificate(espCa, subject, shortLived).certificatePem;
      const none = { name: null, country: null, state: null, pin_code: null, aadhaar: null, year_of_birth: null, gender: null };
      const uniqueId = 'a3f1c0de'.repeat(8);

      it('another ESP’s layout (C, ST, postalCode, pseudonym, serialNumber, description, CN; no O)', () => {
        const pem = issued({
          country: 'IN',
          state: 'Maharashtra',
          postalCode: '411001',
          pseudonym: uniqueId,
          serialNumber: 'XXXXXXXX4321',
          description: 'YOB:1990 Gender:M',
          commonName: 'Vikram Singh',
        });
        expect(subjectString(pem)).toBe(
          `CN=Vikram Singh, description=YOB:1990 Gender:M, serialNumber=XXXXXXXX4321, pseudonym=${uniqueId}, postalCode=411001, ST=Maharashtra, C=IN`,
        );
        expect(readAadhaarCertDetails(pem)).toEqual({
          name: 'Vikram Singh',
          country: 'IN',
          state: 'Maharashtra',
          pin_code: '411001',
          aadhaar: 'XXXXXXXX4321',
          year_of_birth: '1990',
          gender: 'M',
        });
      });

      it('a hash in serialNumber and pseudonym is no masked number; what is absent is null', () => {
        expect(
          readAadhaarCertDetails(
            issued({ country: 'IN', state: 'Goa', serialNumber: 'F'.repeat(64), pseudonym: uniqueId, commonName: 'Zoë D' }),
          ),
        ).toEqual({ ...none, name: 'Zoë D', country: 'IN', state: 'Goa' });
        expect(readAadhaarCertDetails(root.certificatePem)).toEqual({ ...none, name: 'Esign Sandbox Root CA' });
        expect(readAadhaarCertDetails(documentSigner.certificatePem)).toEqual({
          ...none,
          name: 'Esign Platform Document Signer',
          country: 'IN',
        });
      });

      it('recognised forms of the masked number, year of birth and gender, wherever the CA put them', () => {
        const read = (subject: Partial<SubjectFields>) => readAadhaarCertDetails(issued({ commonName: 'A', ...subject }));
        const cases: [Partial<SubjectFields>, Partial<ReturnType<typeof read>>][] = [
          [{ description: 'Year of Birth=1975, Gender=Female' }, { year_of_birth: '1975', gender: 'F' }],
          [{ description: 'YOB 2001; Sex:T' }, { year_of_birth: '2001', gender: 'T' }],
          [{ pseudonym: 'YOB:1988;G:F' }, { year_of_birth: '1988', gender: 'F' }],
          [{ dnQualifier: '1999Mab12cd' }, { year_of_birth: '1999', gender: 'M' }],
          [{ title: 'UID:xxxx-xxxx-0042' }, { aadhaar: 'XXXXXXXX0042' }],
          [
            { description: 'Aadhaar XXXX XXXX 9876 YOB:1960 Gender:Male' },
            { aadhaar: 'XXXXXXXX9876', year_of_birth: '1960', gender: 'M' },
          ],
          [{ serialNumber: 'XXXXXXXX1111', title: 'XXXXXXXX1111' }, { aadhaar: 'XXXXXXXX1111' }],
          [
            { postalCode: '560 001', country: 'IN' },
            { pin_code: '560001', country: 'IN' },
          ],
        ];
        for (const [subject, expected] of cases)
          expect(read(subject), JSON.stringify(subject)).toEqual({ ...none, name: 'A', ...expected });
      });

      it('unrecognised or disagreeing values are null, never a guess', () => {
        const read = (subject: Partial<SubjectFields>) => readAadhaarCertDetails(issued({ commonName: 'A', ...subject }));
        const cases: Partial<SubjectFields>[] = [
          { description: 'born 1990, male' },
          { description: 'YOB:1990 Gender:M', pseudonym: 'YOB:1991;G:F' },
          { description: 'YOB:1850 Gender:X' },
          { description: `YOB:${new Date().getUTCFullYear() + 1}` },
          { serialNumber: '123456780412' },
          { serialNumber: 'XXXXXXXX1111', title: 'XXXXXXXX2222' },
          { postalCode: '060001' },
          { postalCode: 'SW1A 1AA' },
          { dnQualifier: '19X9M' },
        ];
        for (const subject of cases) expect(read(subject), JSON.stringify(subject)).toEqual({ ...none, name: 'A' });
        expect(() => readAadhaarCertDetails('not a certificate')).toThrow();
      });
    });
  });

  describe('openssl', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'certificates-test-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it.skipIf(!hasOpenssl)(
      `parses every certificate with "openssl x509 -noout -text"${hasOpenssl ? '' : ' (skipped: openssl is not installed here)'}`,
      () => {
        for (const pair of [root, espCa, documentSigner, aadhaarSigner]) {
          const result = spawnSync('openssl', ['x509', '-noout', '-text', '-nameopt', 'RFC2253,-esc_msb'], {
            input: pair.certificatePem,
            encoding: 'utf8',
          });
          expect(result.stderr).toBe('');
          expect(result.status).toBe(0);
          expect(result.stdout).toContain('Signature Algorithm: sha256WithRSAEncryption');
          expect(result.stdout).toContain('Public-Key: (2048 bit)');
        }
        const leaf = spawnSync('openssl', ['x509', '-noout', '-text', '-nameopt', 'RFC2253,-esc_msb'], {
          input: aadhaarSigner.certificatePem,
          encoding: 'utf8',
        }).stdout;
        expect(leaf).toContain('CN=José Kumar');
        expect(leaf).toContain('Digital Signature, Non Repudiation');
        expect(leaf).toContain('CA:FALSE');
        expect(leaf).toContain(EKU_DOCUMENT_SIGNING);
        expect(leaf).toContain(EKU_ADOBE_AUTHENTIC_DOCUMENTS);
        expect(leaf).toContain('X509v3 Authority Key Identifier');
        expect(leaf).toContain('X509v3 Subject Key Identifier');
      },
    );

    it.skipIf(!hasOpenssl)(
      `"openssl verify" accepts the chain${hasOpenssl ? '' : ' (skipped: openssl is not installed here)'}`,
      () => {
        const write = (name: string, pem: string) => {
          const file = path.join(dir, name);
          writeFileSync(file, pem);
          return file;
        };
        const rootFile = write('root.pem', root.certificatePem);
        const espFile = write('esp.pem', espCa.certificatePem);
        // The leaf validities are fixed dates (2026-2028), so the check leaves time out and only tests the chain.
        const check = (ca: string, leaf: KeyAndCertificate) =>
          spawnSync('openssl', ['verify', '-no_check_time', '-CAfile', ca, write('leaf.pem', leaf.certificatePem)], {
            encoding: 'utf8',
          });
        expect(check(rootFile, documentSigner).status).toBe(0);
        expect(check(espFile, aadhaarSigner).status).toBe(0);
        expect(check(rootFile, aadhaarSigner).status).not.toBe(0);
      },
    );
  });
});
