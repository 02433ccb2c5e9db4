/**
 * signer-journey: everything a signer does with their invite link. The signing page, the signer API it
 * drives, the checks before signing (one-time codes, location, face), and signing in turn (Aadhaar through
 * an ESP, a DSC through the signer's token and bridge, suresign, PFX). Built on esign (the turn rules, recording a signature) and signing (the mechanics).
 */
import type { ModuleManifest } from '../../platform/module';
import { SignerOtp } from './checks/signer-otp.entity';
import { EspTransaction } from './aadhaar/esp-transaction.entity';
import { DscTransaction } from './dsc/dsc-transaction.entity';
import { createDscBridgeRouter, DSC_BRIDGE_PATH } from './dsc/dsc-bridge-download';
import { createEspResponseRouter } from './aadhaar/esp-response';
import { createSignerPage } from './page/signer-page';
import { createSignerApi, SIGNER_API } from './signer-api';
import { signerJourneyJobs } from './signer-journey.jobs';
import { ESP_RESPONSE_PATH } from './aadhaar/aadhaar-signing';

export const signerJourneyModule: ModuleManifest = {
  name: 'signer-journey',
  entities: [SignerOtp, EspTransaction, DscTransaction],
  jobs: signerJourneyJobs,
  mounts: [
    { path: SIGNER_API, router: createSignerApi },
    { path: ESP_RESPONSE_PATH, router: createEspResponseRouter },
    { path: DSC_BRIDGE_PATH, router: createDscBridgeRouter },
    { path: '/', router: createSignerPage },
  ],
};
