/**
 * signing: the cryptography and PDF mechanics of a signature, knowing nothing of sessions. CMS (PKCS#7)
 * signatures and their verification, certificates (platform CA, Aadhaar subjects), the PDF's signature
 * fields and incremental updates, the ESP backends (sandbox), and name matching on certificates.
 */
import type { ModuleManifest } from '../../platform/module';
import { SandboxEspTransaction } from './esp/esp-transaction.entity';
import { PlatformKey } from './platform-key.entity';
import { sandboxRevocationRouter } from './revocation/sandbox-revocation';
import { sandboxTsaRouter } from './tsa/sandbox-tsa';

export { describeCertificate, readAadhaarCertDetails, type AadhaarCertDetails } from './certificates';
export { signDetachedCms, type SigningIdentity } from './cms-sign';
export type { EspBackend } from './esp/esp';
export { espBackends } from './esp/sandbox-esp';
export { addLongTermValidation, type LongTermValidation } from './ltv/long-term-validation';
export { nameMatchScore } from './name-match';
export { certificationRefusal, type DocMdpPermissions } from './pdf/certification';
export type { ImagePlacement } from './pdf/prepare-for-signing';
export { fillSignature, type PreparedSignature, type SignatureAppearance } from './pdf/sign-incrementally';
export { platformSigningIdentity } from './platform-identity';
export { sandboxTsaRouter } from './tsa/sandbox-tsa';
export { timestampSignature } from './tsa/timestamp-signature';
export { normalizeAadhaarNumber } from './verhoeff';
export { trustAnchorsPem } from './trust-anchors';
export type { DocumentVerification, SignatureReport } from './verify-document';

export const signingModule: ModuleManifest = {
  name: 'signing',
  entities: [PlatformKey, SandboxEspTransaction],
  // The sandbox's own RFC 3161 TSA, CRLs and OCSP responder (empty routers outside the sandbox).
  mounts: [
    { path: '/', router: sandboxTsaRouter },
    { path: '/', router: sandboxRevocationRouter },
  ],
};
