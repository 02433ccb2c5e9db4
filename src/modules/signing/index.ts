/**
 * signing: the cryptography and PDF mechanics of a signature, knowing nothing of sessions. CMS (PKCS#7)
 * signatures and their verification, certificates (platform CA, Aadhaar subjects), the PDF's signature
 * fields and incremental updates, the ESP backends (sandbox), and name matching on certificates.
 */
import type { ModuleManifest } from '../../platform/module';
import { PlatformKey } from './platform-key.entity';
import { sandboxRevocationRouter } from './revocation/sandbox-revocation';
import { sandboxTsaRouter } from './tsa/sandbox-tsa';
import { sandboxEspGateway } from './esp/esp-adapter';

export { readAadhaarCertDetails, type AadhaarCertDetails } from './aadhaar-certificate';
export { createRootCa, describeCertificate, issueSigningCertificate } from './certificates';
export { signDetachedCms, type SigningIdentity } from './cms-sign';
export {
  buildEspRequest,
  checkReturnedSignature,
  claimedTxn,
  espConfig,
  readEspResponse,
  sandboxEspGateway,
  type EspRequest,
} from './esp/esp-adapter';
export {
  buildEsignRequest,
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
export { GATEWAY_ERRORS, sandboxEspGatewayRouter, type SandboxEspGatewayOptions } from './esp/sandbox-esp-gateway';
export {
  addLongTermValidation,
  prefetchRevocation,
  type KnownRevocation,
  type LongTermValidation,
} from './ltv/long-term-validation';
export { nameMatchScore } from './name-match';
export { certificationRefusal, type DocMdpPermissions } from './pdf/certification';
export type { ImagePlacement } from './pdf/prepare-for-signing';
export { fillSignature, type PreparedSignature, type SignatureAppearance } from './pdf/sign-incrementally';
export { platformSigningIdentity, signingIdentityFromPfx } from './platform-identity';
export { sandboxTsaRouter } from './tsa/sandbox-tsa';
export { timestampSignature } from './tsa/timestamp-signature';
export { normalizeAadhaarNumber } from './verhoeff';
export { trustAnchorsPem } from './trust-anchors';
export type { DocumentVerification, SignatureReport } from './verify/verify-document';

export const signingModule: ModuleManifest = {
  name: 'signing',
  entities: [PlatformKey],
  // The sandbox's own RFC 3161 TSA, CRLs and OCSP responder (empty routers outside the sandbox).
  mounts: [
    { path: '/', router: sandboxTsaRouter },
    { path: '/', router: sandboxRevocationRouter },
    { path: '/', router: sandboxEspGateway },
  ],
};
