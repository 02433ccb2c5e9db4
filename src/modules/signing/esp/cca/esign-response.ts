/**
 * The ESP's `<EsignResp>` of the CCA eSign API (the same shape in 2.1 and 3.2), signed by the ESP with the
 * profile of ./xml-dsig.ts:
 *   <EsignResp ver status="1|0" ts txn resCode errCode errMsg>
 *     <UserX509Certificate>base64 DER of the signer's certificate</UserX509Certificate>
 *     <Signatures><DocSignature id sigHashAlgorithm="SHA256" error="">base64 PKCS#7</DocSignature></Signatures>
 *     <Signature>ESP's enveloped XML-DSig</Signature>
 *   </EsignResp>
 * A failure is status="0" with errCode and errMsg, and neither the certificate nor signatures.
 *
 * The PKCS#7 is a detached CMS SignedData whose signed attributes' messageDigest is the InputHash: the ASP checks
 * it with `verifyEsignSignature` before embedding it into the prepared PDF.
 */
import { constants, createVerify, X509Certificate } from 'node:crypto';
import { DOMImplementation } from '@xmldom/xmldom';
import { OID, RSA_SIGNATURE_DIGEST_BY_OID } from '../../cms-algorithms';
import { issuerAndSerial, parseSignedData } from '../../cms-parse';
import { contentOf, DerError, readOid, readRoot, TAG } from '../../der';
import {
  attributeReader,
  checkCertificate,
  childElements,
  ESIGN_VERSIONS,
  formatEsignTimestamp,
  invalid,
  parseEsignTimestamp,
  tokenField,
  type EsignVersion,
} from './esign-request';
import { EsignXmlError, serializeXml, signEnveloped, verifyEnveloped, type XmlSigner } from './xml-dsig';

export interface EsignDocSignature {
  /** The InputHash id it signs. */
  id: string;
  /** The detached CMS SignedData (DER). */
  cms: Uint8Array;
}

export type EsignResponseInput = {
  version: EsignVersion;
  /** The request's txn. */
  txn: string;
  /** The ESP's own reference of the transaction. */
  resCode: string;
  /** Default now. */
  ts?: Date;
  /** The ESP's response-signing key and certificate. */
  signer: XmlSigner;
} & (
  | { status: 'success'; userCertificatePem: string; signatures: EsignDocSignature[] }
  | { status: 'failure'; errCode: string; errMsg: string }
);

export interface ParsedEsignResponse {
  /** null when the ESP did not say. */
  ver: EsignVersion | null;
  /** "1" success, "0" failure. */
  status: '1' | '0';
  ts: Date;
  txn: string;
  resCode: string;
  errCode: string;
  errMsg: string;
  /** Success only; '' on failure. */
  userCertificatePem: string;
  /** Success only; each with the `error` the ESP gave for it ('' when signed). */
  signatures: (EsignDocSignature & { error: string })[];
}

/** The signed `<EsignResp>` XML (UTF-8 text with its XML declaration). */
export function buildEsignResponse(input: EsignResponseInput): string {
  if (!ESIGN_VERSIONS.includes(input.version)) throw new RangeError(`unsupported eSign version ${String(input.version)}`);
  const doc = new DOMImplementation().createDocument(null, 'EsignResp', null);
  const response = doc.documentElement!;
  const success = input.status === 'success';
  response.setAttribute('ver', input.version);
  response.setAttribute('status', success ? '1' : '0');
  response.setAttribute('ts', formatEsignTimestamp(input.ts ?? new Date()));
  response.setAttribute('txn', input.txn);
  response.setAttribute('resCode', input.resCode);
  response.setAttribute('errCode', success ? '' : input.errCode);
  response.setAttribute('errMsg', success ? '' : input.errMsg);
  if (input.status === 'success') {
    const certificate = doc.createElement('UserX509Certificate');
    response.appendChild(certificate);
    certificate.appendChild(doc.createTextNode(new X509Certificate(input.userCertificatePem).raw.toString('base64')));
    const signatures = doc.createElement('Signatures');
    response.appendChild(signatures);
    for (const signature of input.signatures) {
      const docSignature = doc.createElement('DocSignature');
      signatures.appendChild(docSignature);
      docSignature.setAttribute('id', signature.id);
      docSignature.setAttribute('sigHashAlgorithm', 'SHA256');
      docSignature.setAttribute('error', '');
      docSignature.appendChild(doc.createTextNode(Buffer.from(signature.cms).toString('base64')));
    }
  }
  return `<?xml version="1.0" encoding="UTF-8"?>${signEnveloped(serializeXml(response), input.signer)}`;
}

/**
 * The ASP's side: checks the response's signature against the configured ESP certificate and answers what it
 * says. Refuses with `EsignXmlError` only. Whether `txn` is one of ours, not yet answered, and `ts` fresh is the
 * caller's to judge; so is each PKCS#7 (`verifyEsignSignature`).
 */
export function parseAndVerifyEsignResponse(xml: string, espCertificatePem: string): ParsedEsignResponse {
  checkCertificate(espCertificatePem);
  const response = verifyEnveloped(xml, espCertificatePem, 'EsignResp');
  const read = attributeReader(response);
  const ver = read('ver', '');
  if (ver !== '' && ver !== '2.1' && ver !== '3.2') throw invalid(`unsupported eSign version "${ver}"`);
  const status = read('status');
  if (status !== '1' && status !== '0') throw invalid('status must be "1" or "0"');
  const parsed: ParsedEsignResponse = {
    ver: ver === '' ? null : ver,
    status,
    ts: parseEsignTimestamp(read('ts')),
    txn: tokenField(read('txn'), 'txn'),
    resCode: read('resCode', ''),
    errCode: read('errCode', ''),
    errMsg: read('errMsg', ''),
    userCertificatePem: '',
    signatures: [],
  };
  if (status === '0') return parsed;

  const certificates = childElements(response, 'UserX509Certificate');
  if (certificates.length !== 1) throw invalid('a successful response carries one <UserX509Certificate>');
  try {
    parsed.userCertificatePem = new X509Certificate(base64Field(certificates[0]!.textContent, 'UserX509Certificate')).toString();
  } catch (error) {
    if (error instanceof EsignXmlError) throw error;
    throw invalid('UserX509Certificate is not a certificate');
  }
  const signatures = childElements(response, 'Signatures');
  if (signatures.length !== 1) throw invalid('a successful response carries one <Signatures>');
  const docSignatures = childElements(signatures[0]!, 'DocSignature');
  if (docSignatures.length === 0) throw invalid('a successful response carries at least one <DocSignature>');
  parsed.signatures = docSignatures.map((docSignature) => {
    const readSignature = attributeReader(docSignature);
    const algorithm = readSignature('sigHashAlgorithm', 'SHA256').toUpperCase();
    if (algorithm !== 'SHA256') throw invalid('sigHashAlgorithm must be SHA256');
    const error = readSignature('error', '');
    return {
      id: tokenField(readSignature('id'), 'DocSignature id'),
      error,
      cms: error ? new Uint8Array() : base64Field(docSignature.textContent, 'DocSignature'),
    };
  });
  return parsed;
}

export interface EsignSignatureCheck {
  valid: boolean;
  /** Why not, when not valid. */
  problems: string[];
}

/**
 * Whether `cms` (a DocSignature's PKCS#7) signs exactly the document whose SHA-256 is `sha256Hex`, with
 * `userCertificatePem` (the response's UserX509Certificate): a detached SignedData of id-data, its signer that very
 * certificate, signed attributes whose messageDigest is the hash, and an RSA signature over them that verifies.
 * The chain of the certificate is not judged here (the document's verification does that). Never throws for
 * any bytes.
 */
export function verifyEsignSignature(cms: Uint8Array, sha256Hex: string, userCertificatePem: string): EsignSignatureCheck {
  const problems: string[] = [];
  const refuse = (problem: string): EsignSignatureCheck => ({ valid: false, problems: [...problems, problem] });
  if (!/^[0-9a-fA-F]{64}$/.test(sha256Hex)) return refuse('the expected hash is not a SHA-256 in hex');
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(userCertificatePem);
  } catch {
    return refuse('the user certificate is not a certificate');
  }
  try {
    const parsed = parseSignedData(cms);
    const info = parsed.signerInfo;
    if (parsed.eContentType !== OID.data || parsed.eContent) return refuse('not a detached signature over id-data');
    if (info.digestOid !== OID.sha256) return refuse('the digest algorithm is not SHA-256');
    const { issuer, serial } = issuerAndSerial(certificate.raw);
    if (!info.issuer?.equals(issuer) || !info.serial?.equals(serial)) return refuse('the signer is not the user certificate');
    if (!info.signedAttrs) return refuse('no signed attributes');
    const contentType = info.attributes.get(OID.contentType)?.[0];
    if (!contentType || readOid(contentType, readRoot(contentType)) !== OID.data)
      return refuse('the content-type is not id-data');
    const messageDigest = info.attributes.get(OID.messageDigest)?.[0];
    if (!messageDigest || messageDigest[0] !== TAG.octetString) return refuse('no messageDigest attribute');
    if (!contentOf(messageDigest, readRoot(messageDigest)).equals(Buffer.from(sha256Hex, 'hex'))) {
      return refuse('the messageDigest is not the document hash');
    }
    const digest = info.signatureOid === OID.rsaEncryption ? 'sha256' : RSA_SIGNATURE_DIGEST_BY_OID[info.signatureOid];
    if (!digest) return refuse(`unsupported signature algorithm ${info.signatureOid}`);
    // The signature covers the signed attributes as a SET OF (tag 0x31), not as transmitted ([0] IMPLICIT).
    const valid = createVerify(digest)
      .update(Buffer.from([TAG.set]))
      .update(info.signedAttrs.subarray(1))
      .verify({ key: certificate.publicKey, padding: constants.RSA_PKCS1_PADDING }, info.signature);
    return valid ? { valid: true, problems } : refuse('the signature does not verify with the user certificate');
  } catch (error) {
    if (error instanceof DerError) return refuse(`malformed PKCS#7: ${error.message}`);
    return refuse(`the PKCS#7 could not be checked: ${(error as Error).message}`);
  }
}

function base64Field(text: string | null, name: string): Buffer {
  const compact = (text ?? '').replace(/\s+/g, '');
  if (!compact || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) throw invalid(`${name} is not base64`);
  return Buffer.from(compact, 'base64');
}
