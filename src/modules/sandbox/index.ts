/**
 * sandbox: the stand-ins for what a production deployment gets from outside. The sandbox root CA and the keys it
 * issues (signing's fallback when no key is configured), the sandbox ESP's gateway, the RFC 3161 TSA, the CRLs and
 * OCSP responder, the DSC CA that issues and revokes test DSCs, and the mock and simulated stamp vendors. Signing and stamps declare the slots they need
 * (`sandboxAuthority`, `stampVendors`) and never import this module; the composition (src/modules.ts) provides
 * these to them. The routers are empty outside the modes that use them (APP_ENV=sandbox, or the built-in sandbox
 * ESP); the mock vendor serves `mock: true` orders in production too.
 */
import { provide, type ModuleManifest } from '../../platform/module';
import { sandboxAuthority } from '../signing';
import { stampVendors } from '../stamps';
import { sandboxDscRouter } from './dsc/sandbox-dsc';
import { SandboxRevokedCertificate } from './dsc/sandbox-revoked-certificate.entity';
import { sandboxEspGateway } from './esp/esp-gateway-mount';
import { sandboxRevocationRouter } from './revocation/sandbox-revocation';
import { sandboxCaAuthority } from './sandbox-ca';
import { sandboxTsaRouter } from './tsa/sandbox-tsa';
import { simulatedStampVendors } from './vendors/simulated-vendors';

export { GATEWAY_ERRORS, sandboxEspGatewayRouter, type SandboxEspGatewayOptions } from './esp/sandbox-esp-gateway';

export const sandboxModule: ModuleManifest = {
  name: 'sandbox',
  entities: [SandboxRevokedCertificate],
  // The sandbox's own RFC 3161 TSA, CRLs and OCSP responder, its DSC CA, and the ESP gateway (empty routers outside
  // the sandbox).
  mounts: [
    { path: '/', router: sandboxTsaRouter },
    { path: '/', router: sandboxRevocationRouter },
    { path: '/', router: sandboxDscRouter },
    { path: '/', router: sandboxEspGateway },
  ],
  provides: [provide(sandboxAuthority, sandboxCaAuthority), provide(stampVendors, simulatedStampVendors)],
};
