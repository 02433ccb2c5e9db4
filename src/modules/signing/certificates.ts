/**
 * X.509 certificates for signing: the sandbox root CAs (the platform's document-signing chain, the sandbox ESP's
 * CA) and document-signing certificates issued by them, and the reading of any certificate's names. The Aadhaar
 * eSign subjects (the sandbox ESP's profile, and reading any ESP's) are in aadhaar-certificate.ts. Self-contained:
 * no database, no HTTP; the only clock read is the current time for a root's validity.
 *
 * Keys are RSA 2048 made by Node's crypto (node-forge's own key generation is far slower); certificates are
 * built and signed (SHA-256 with RSA) by node-forge. Private keys are returned as unencrypted PKCS#8 PEM
 * ("BEGIN PRIVATE KEY"); an issuer key may also be PKCS#1 ("BEGIN RSA PRIVATE KEY"), as `openPkcs12` returns.
 * Issuers must hold RSA keys (node-forge signs with RSA only); the reading functions accept any certificate.
 *
 * Name values are written as UTF8String, so names such as "José Kumar" survive, except countryName, serialNumber
 * and dnQualifier, which X.520 requires as PrintableString. Names are written most general first (C, ST,
 * postalCode, O, OU, pseudonym, serialNumber, dnQualifier, title, description, CN) and shown most specific first,
 * as RFC 4514 does: "CN=..., ST=..., C=IN".
 */
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { formatDistinguishedName, type NameAttribute } from './distinguished-name';

export interface KeyAndCertificate {
  privateKeyPem: string;
  certificatePem: string;
}

export interface SubjectFields {
  commonName: string;
  organization?: string;
  organizationalUnit?: string[];
  /** Two-letter ISO 3166 code. */
  country?: string;
  state?: string;
  postalCode?: string;
  /** X.520 serialNumber (PrintableString characters only), not the certificate's serial number. */
  serialNumber?: string;
  pseudonym?: string;
  title?: string;
  /** X.520 description (2.5.4.13): some ESPs put the holder's year of birth and gender here. */
  description?: string;
  /** X.520 dnQualifier (PrintableString characters only). */
  dnQualifier?: string;
}

/** Microsoft "Document Signing" extended key usage. */
export const EKU_DOCUMENT_SIGNING = '1.3.6.1.4.1.311.10.3.12';
/** Adobe "Authentic Documents Trust" extended key usage. */
export const EKU_ADOBE_AUTHENTIC_DOCUMENTS = '1.2.840.113583.1.1.5';

/** The name attributes this service writes and reads, by their X.520 OIDs. */
export const NAME_OID = {
  commonName: '2.5.4.3',
  serialNumber: '2.5.4.5',
  country: '2.5.4.6',
  state: '2.5.4.8',
  organization: '2.5.4.10',
  organizationalUnit: '2.5.4.11',
  title: '2.5.4.12',
  description: '2.5.4.13',
  postalCode: '2.5.4.17',
  dnQualifier: '2.5.4.46',
  pseudonym: '2.5.4.65',
} as const;
const OID = NAME_OID;

const ROOT_VALIDITY_YEARS = 10;
/** A root's notBefore is set this far in the past, so that a verifier whose clock lags still accepts it. */
const ROOT_BACKDATE_MS = 24 * 60 * 60 * 1000;
const SERIAL_BYTES = 16;

// ---------------------------------------------------------------------------------------------------------------
// Issuing

/** A self-signed root CA (RSA 2048, SHA-256), basicConstraints CA:true, keyUsage keyCertSign+cRLSign, ~10 years. */
export function createRootCa(commonName: string, organization: string): KeyAndCertificate {
  const keys = generateRsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerialNumber();
  const notBefore = new Date(Date.now() - ROOT_BACKDATE_MS);
  notBefore.setUTCMilliseconds(0);
  const notAfter = new Date(notBefore);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + ROOT_VALIDITY_YEARS);
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  const name = nameAttributes({ commonName, organization });
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keys.privateKeyPem), forge.md.sha256.create());
  return { privateKeyPem: keys.privateKeyPem, certificatePem: forge.pki.certificateToPem(cert) };
}

/**
 * Where a relying party learns whether a certificate was revoked (RFC 5280 4.2.1.13 and 4.2.2.1): the issuer's CRL,
 * its OCSP responder, and where the issuer's certificate can be fetched.
 */
export interface RevocationPointers {
  crlUrl: string;
  ocspUrl: string;
  caIssuersUrl?: string;
}

/**
 * A CA certificate issued by `issuer` (an intermediate, as licensed CAs are under a national root): basicConstraints
 * CA:true with pathLen 0 (it issues end entities only), keyUsage keyCertSign+cRLSign, the issuer's validity.
 */
export function issueIntermediateCa(
  issuer: KeyAndCertificate,
  commonName: string,
  organization: string,
  revocation?: RevocationPointers,
): KeyAndCertificate {
  const issuerCert = forge.pki.certificateFromPem(issuer.certificatePem);
  const keys = generateRsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerialNumber();
  cert.validity.notBefore = issuerCert.validity.notBefore;
  cert.validity.notAfter = issuerCert.validity.notAfter;
  cert.setSubject(nameAttributes({ commonName, organization }));
  cert.setIssuer(reusableAttributes(issuerCert.subject.attributes));
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: subjectKeyIdentifierBytes(issuerCert) },
    ...revocationExtensions(revocation),
  ]);
  cert.sign(forge.pki.privateKeyFromPem(issuer.privateKeyPem), forge.md.sha256.create());
  return { privateKeyPem: keys.privateKeyPem, certificatePem: forge.pki.certificateToPem(cert) };
}

/**
 * A certificate issued by `issuer`, for signing documents: keyUsage digitalSignature+nonRepudiation (critical),
 * extKeyUsage Microsoft document signing and Adobe authentic documents trust, basicConstraints CA:false
 * (critical), subjectKeyIdentifier and authorityKeyIdentifier (the issuer's subjectKeyIdentifier), a random
 * 16-byte positive serial, and a fresh RSA 2048 key. The validity is taken as given (whole seconds; X.509 has no
 * finer precision) and is not clamped to the issuer's. For `timestamps` (a TSA), the only extended key usage is
 * id-kp-timeStamping, critical.
 */
export function issueSigningCertificate(
  issuer: KeyAndCertificate,
  subject: SubjectFields,
  validity: { notBefore: Date; notAfter: Date },
  options: {
    purpose?: 'documents' | 'timestamps';
    revocation?: RevocationPointers;
    /** false: digitalSignature only (a test certificate a DSC check must refuse); default true. */
    nonRepudiation?: boolean;
  } = {},
): KeyAndCertificate {
  const purpose = options.purpose ?? 'documents';
  const notBefore = wholeSeconds(validity.notBefore, 'validity.notBefore');
  const notAfter = wholeSeconds(validity.notAfter, 'validity.notAfter');
  if (notAfter.getTime() <= notBefore.getTime()) throw new RangeError('validity.notAfter must be after validity.notBefore');

  const issuerCert = forge.pki.certificateFromPem(issuer.certificatePem);
  const issuerKey = forge.pki.privateKeyFromPem(issuer.privateKeyPem);
  const issuerPublic = issuerCert.publicKey as forge.pki.rsa.PublicKey;
  if (issuerKey.n.compareTo(issuerPublic.n) !== 0 || issuerKey.e.compareTo(issuerPublic.e) !== 0) {
    throw new Error("the issuer's private key does not match the issuer's certificate");
  }

  const subjectAttributes = nameAttributes(subject);

  const keys = generateRsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerialNumber();
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  cert.setSubject(subjectAttributes);
  cert.setIssuer(reusableAttributes(issuerCert.subject.attributes));
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: options.nonRepudiation ?? true, critical: true },
    // RFC 3161 2.3: a TSA's certificate has exactly one extended key usage, id-kp-timeStamping, critical.
    purpose === 'timestamps'
      ? { name: 'extKeyUsage', timeStamping: true, critical: true }
      : { name: 'extKeyUsage', [EKU_DOCUMENT_SIGNING]: true, [EKU_ADOBE_AUTHENTIC_DOCUMENTS]: true },
    { name: 'subjectKeyIdentifier' },
    // forge's `keyIdentifier: true` would take the new certificate's own key, so the issuer's is passed as bytes.
    { name: 'authorityKeyIdentifier', keyIdentifier: subjectKeyIdentifierBytes(issuerCert) },
    ...revocationExtensions(options.revocation),
  ]);
  cert.sign(issuerKey, forge.md.sha256.create());
  return { privateKeyPem: keys.privateKeyPem, certificatePem: forge.pki.certificateToPem(cert) };
}

/**
 * cRLDistributionPoints (forge writes it) and authorityInfoAccess, which forge cannot write: its DER is built here
 * and handed over as the extension's value.
 *   AuthorityInfoAccessSyntax ::= SEQUENCE OF AccessDescription { accessMethod OID, accessLocation GeneralName }
 */
function revocationExtensions(pointers: RevocationPointers | undefined): object[] {
  if (!pointers) return [];
  const uri = (url: string) => forge.asn1.create(forge.asn1.Class.CONTEXT_SPECIFIC, 6, false, url);
  const access = (method: string, url: string) =>
    forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.SEQUENCE, true, [
      forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.OID, false, forge.asn1.oidToDer(method).getBytes()),
      uri(url),
    ]);
  const aia = forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.SEQUENCE, true, [
    access('1.3.6.1.5.5.7.48.1', pointers.ocspUrl), // id-ad-ocsp
    ...(pointers.caIssuersUrl ? [access('1.3.6.1.5.5.7.48.2', pointers.caIssuersUrl)] : []), // id-ad-caIssuers
  ]);
  return [
    { name: 'cRLDistributionPoints', altNames: [{ type: 6, value: pointers.crlUrl }] },
    { id: '1.3.6.1.5.5.7.1.1', critical: false, value: forge.asn1.toDer(aia).getBytes() },
  ];
}

/** A random positive certificate serial of exactly 16 bytes (126 random bits), as lowercase hex. */
export function randomSerialNumber(): string {
  const bytes = randomBytes(SERIAL_BYTES);
  // 0x40-0x7f: positive (high bit clear) and never a leading zero, so the DER INTEGER is 16 bytes and minimal.
  bytes[0] = (bytes[0]! & 0x3f) | 0x40;
  return bytes.toString('hex');
}

function generateRsaKeyPair(): { privateKeyPem: string; publicKey: forge.pki.rsa.PublicKey } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicExponent: 0x10001,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKey: forge.pki.publicKeyFromPem(publicKey) };
}

function wholeSeconds(date: Date, field: string): Date {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) throw new RangeError(`${field} must be a valid Date`);
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

function subjectKeyIdentifierBytes(cert: forge.pki.Certificate): string {
  const extension = cert.getExtension('subjectKeyIdentifier') as { subjectKeyIdentifier?: string } | null;
  if (extension?.subjectKeyIdentifier) return forge.util.hexToBytes(extension.subjectKeyIdentifier);
  return cert.generateSubjectKeyIdentifier().getBytes();
}

const PRINTABLE_STRING = /^[A-Za-z0-9 '()+,\-./:=?]+$/;

function nameAttributes(fields: SubjectFields): forge.pki.CertificateField[] {
  if (typeof fields.commonName !== 'string') throw new RangeError('subject commonName is required');
  const attributes: forge.pki.CertificateField[] = [];
  const utf8 = (type: string, value: string | undefined, field: string) => {
    if (value === undefined) return;
    if (typeof value !== 'string' || value.trim() === '') throw new RangeError(`subject ${field} must be a non-empty string`);
    attributes.push({ type, value, valueTagClass: stringTag(forge.asn1.Type.UTF8) });
  };
  if (fields.country !== undefined) {
    if (!/^[A-Z]{2}$/.test(fields.country)) throw new RangeError('subject country must be a two-letter code such as IN');
    attributes.push({ type: OID.country, value: fields.country, valueTagClass: stringTag(forge.asn1.Type.PRINTABLESTRING) });
  }
  utf8(OID.state, fields.state, 'state');
  utf8(OID.postalCode, fields.postalCode, 'postalCode');
  utf8(OID.organization, fields.organization, 'organization');
  for (const unit of fields.organizationalUnit ?? []) utf8(OID.organizationalUnit, unit, 'organizationalUnit');
  utf8(OID.pseudonym, fields.pseudonym, 'pseudonym');
  const printable = (type: string, value: string | undefined, field: string) => {
    if (value === undefined) return;
    if (!PRINTABLE_STRING.test(value)) {
      throw new RangeError(`subject ${field} must use PrintableString characters (letters, digits, space, '()+,-./:=?)`);
    }
    attributes.push({ type, value, valueTagClass: stringTag(forge.asn1.Type.PRINTABLESTRING) });
  };
  printable(OID.serialNumber, fields.serialNumber, 'serialNumber');
  printable(OID.dnQualifier, fields.dnQualifier, 'dnQualifier');
  utf8(OID.title, fields.title, 'title');
  utf8(OID.description, fields.description, 'description');
  utf8(OID.commonName, fields.commonName, 'commonName');
  return attributes;
}

/** forge reads `valueTagClass` as the value's ASN.1 type; @types/node-forge declares it as a class. */
function stringTag(type: forge.asn1.Type): forge.asn1.Class {
  return type as number as forge.asn1.Class;
}

/**
 * A parsed name made fit to be written again. forge parses UTF8String values as raw UTF-8 bytes but encodes
 * UTF8String values from text, so without decoding first a non-ASCII issuer name would be encoded twice and no
 * longer match the issuer's subject. Other string types are written back byte for byte.
 */
function reusableAttributes(attributes: forge.pki.CertificateField[]): forge.pki.CertificateField[] {
  return attributes.map((attribute) => ({
    type: attribute.type,
    valueTagClass: attribute.valueTagClass,
    value:
      (attribute.valueTagClass as number) === forge.asn1.Type.UTF8
        ? forge.util.decodeUtf8(attribute.value as string)
        : attribute.value,
  }));
}

// ---------------------------------------------------------------------------------------------------------------
// Reading any certificate

/**
 * The certificate's subject as an RFC 4514 string, most specific first: "CN=José Kumar, ..., ST=Karnataka, C=IN".
 * Values are shown as text (UTF-8 decoded), escaped as RFC 4514 requires (see distinguished-name.ts).
 */
export function subjectString(certificatePem: string): string {
  return formatDistinguishedName(readNames(certificatePem).subject);
}

export interface CertificateDescription {
  /** RFC 4514, as `subjectString`. */
  subject: string;
  /** RFC 4514, as `subjectString`. */
  issuer: string;
  /** Lowercase hex, as node-forge and `openPkcs12` give it. */
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  /** Uppercase hex pairs separated by colons, as OpenSSL shows it. */
  sha256Fingerprint: string;
}

export function describeCertificate(certificatePem: string): CertificateDescription {
  const x509 = new X509Certificate(certificatePem);
  const names = namesFromDer(x509.raw);
  return {
    subject: formatDistinguishedName(names.subject),
    issuer: formatDistinguishedName(names.issuer),
    serialNumber: x509.serialNumber.toLowerCase(),
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    sha256Fingerprint: x509.fingerprint256,
  };
}

/** True when `privateKeyPem` is the key of the certificate. */
export function keyMatchesCertificate(privateKeyPem: string, certificatePem: string): boolean {
  return new X509Certificate(certificatePem).checkPrivateKey(createPrivateKey(privateKeyPem));
}

/** The certificate's subject attributes, as encoded (most general first), decoded to text. Throws when not a certificate. */
export function subjectAttributes(certificatePem: string): NameAttribute[] {
  return readNames(certificatePem).subject;
}

/** Subject and issuer read with forge's DER parser only, so certificates with any key type (EC too) can be read. */
function readNames(certificatePem: string): { subject: NameAttribute[]; issuer: NameAttribute[] } {
  return namesFromDer(new X509Certificate(certificatePem).raw);
}

function namesFromDer(der: Buffer): { subject: NameAttribute[]; issuer: NameAttribute[] } {
  const certificate = forge.asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
  const tbs = (certificate.value as forge.asn1.Asn1[])[0]!;
  const fields = tbs.value as forge.asn1.Asn1[];
  // TBSCertificate: [0] version (absent in v1), serialNumber, signature, issuer, validity, subject, ...
  const first = fields[0]!.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC ? 1 : 0;
  return { issuer: parseName(fields[first + 2]!), subject: parseName(fields[first + 4]!) };
}

function parseName(name: forge.asn1.Asn1): NameAttribute[] {
  const attributes: NameAttribute[] = [];
  for (const rdn of name.value as forge.asn1.Asn1[]) {
    for (const pair of rdn.value as forge.asn1.Asn1[]) {
      const [oid, value] = pair.value as forge.asn1.Asn1[];
      attributes.push({ type: forge.asn1.derToOid(oid!.value as string), value: decodeString(value!) });
    }
  }
  return attributes;
}

function decodeString(value: forge.asn1.Asn1): string {
  const bytes = Buffer.from(typeof value.value === 'string' ? value.value : '', 'binary');
  switch (value.type as number) {
    case forge.asn1.Type.UTF8:
      return bytes.toString('utf8');
    case forge.asn1.Type.BMPSTRING: {
      let text = '';
      for (let i = 0; i + 1 < bytes.length; i += 2) text += String.fromCharCode(bytes.readUInt16BE(i));
      return text;
    }
    case 28: {
      // UniversalString: UCS-4 big-endian.
      let text = '';
      for (let i = 0; i + 3 < bytes.length; i += 4) text += String.fromCodePoint(bytes.readUInt32BE(i));
      return text;
    }
    default:
      // PrintableString, IA5String, TeletexString (read as Latin-1, as most software does).
      return bytes.toString('latin1');
  }
}
