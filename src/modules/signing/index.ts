/**
 * signing: the cryptography and PDF mechanics of a signature, knowing nothing of sessions. CMS (PKCS#7)
 * signatures and their verification, certificates (platform CA, Aadhaar subjects), the PDF's signature
 * fields and incremental updates, the ESP backends, the checks and CMS of a DSC signer's token signature, and name
 * matching on certificates. The sandbox's stand-ins
 * (its CA, ESP gateway, TSA, CRLs and OCSP) live in the sandbox module: signing asks for them through the
 * `sandboxAuthority` slot, and exports below the protocol pieces they answer with.
 */
import type { ModuleManifest } from '../../platform/module';
import { EspHealth } from './esp/esp-health.entity';
import { PlatformKey } from './platform-key.entity';

export { readAadhaarCertDetails, type AadhaarCertDetails } from './aadhaar-certificate';
export { createRootCa, describeCertificate, issueSigningCertificate } from './certificates';
export { signDetachedCms, type SigningIdentity } from './cms-sign';
export {
  buildEspRequest,
  checkReturnedSignature,
  claimedTxn,
  espConfig,
  readEspResponse,
  type EspRequest,
} from './esp/esp-adapter';
export {
  buildEsignRequest,
  MAX_INPUT_HASHES,
  parseAndVerifyEsignRequest,
  type EsignRequestInput,
  type EsignVersion,
  type ParsedEsignRequest,
} from './esp/cca/esign-request';
export {
  buildEsignResponse,
  parseAndVerifyEsignResponse,
  verifyEsignSignature,
  type ParsedEsignResponse,
} from './esp/cca/esign-response';
export { buildEsignAcknowledgement, esignTxnRef, parseAndVerifyEsignAcknowledgement, readEsignTxnRef } from './esp/cca/esign-ack';
export { EsignXmlError, MAX_ESIGN_XML_BYTES } from './esp/cca/xml-dsig';
export { isSignerCancellation, SIGNER_CANCEL_CODES } from './esp/cca/error-codes';
export { postEspRequest, type EspAcknowledgement } from './esp/esp-request-post';
export { espRoute, normalizeBackend } from './esp/esp-route';
export { espHealthReport, probeEsp, recordEspOutcome, skippedEsps, type EspHealthRow } from './esp/esp-health';
export {
  addLongTermValidation,
  prefetchRevocation,
  type KnownRevocation,
  type LongTermValidation,
} from './ltv/long-term-validation';
export {
  checkDscCertificate,
  dscHolderName,
  type DscCertificateRule,
  type DscRefusal,
  type DscRefusalCode,
} from './dsc/dsc-certificate';
export { dscCms, dscDigestToSign } from './dsc/dsc-signature';
export { nameMatchScore } from './name-match';
export { certificationRefusal, type DocMdpPermissions } from './pdf/certification';
export type { FormFieldLayout, FormFill, FormImage, FormWidgetKind } from './pdf/form-fields';
export type { ImagePlacement } from './pdf/prepare-for-signing';
export {
  fillSignature,
  signedRange,
  signedRangeDigest,
  type PreparedSignature,
  type SignatureAppearance,
} from './pdf/sign-incrementally';
export { platformSigningIdentity, signingIdentityFromPfx } from './platform-identity';
export { timestampSignature } from './tsa/timestamp-signature';
export { normalizeAadhaarNumber } from './verhoeff';
export { dscTrustAnchorsPem, trustAnchorsPem } from './trust-anchors';
export type { DocumentVerification, SignatureReport } from './verify/verify-document';

export { sandboxAuthority, type SandboxAuthority } from './sandbox-authority';

// What the sandbox module's stand-ins are made of: the CA's certificates and keys, the eSign XML they answer, the
// time-stamp and revocation protocols (the same code the production path reads them with).
export { aadhaarSubject, type AadhaarIdentity } from './aadhaar-certificate';
export { issueIntermediateCa, type KeyAndCertificate, type RevocationPointers } from './certificates';
export { OID } from './cms-algorithms';
export { signDetachedCmsOverDigest, signEncapsulatedCms } from './cms-sign';
export { DerError } from './der';
export { aspIdentity } from './esp/esp-adapter';
export { tokenField } from './esp/cca/esign-request';
export { keyInfoCertificatePem, parseUntrustedXml } from './esp/cca/xml-dsig';
export { platformKey } from './platform-keys';
export {
  decodeOcspRequest,
  encodeCrl,
  encodeOcspFailure,
  encodeOcspResponse,
  issuedBy,
  OCSP_REQUEST_TYPE,
  OCSP_RESPONSE_TYPE,
  OCSP_STATUS,
} from './revocation/revocation-protocol';
export {
  decodeTimestampRequest,
  encodeTimestampResponse,
  encodeTstInfo,
  PKI_FAILURE,
  PKI_STATUS,
  TIMESTAMP_QUERY_TYPE,
  TIMESTAMP_REPLY_TYPE,
} from './tsa/timestamp-protocol';

export const signingModule: ModuleManifest = {
  name: 'signing',
  entities: [PlatformKey, EspHealth],
};
