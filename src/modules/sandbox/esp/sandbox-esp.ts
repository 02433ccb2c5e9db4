import type { AadhaarIdentity } from '../../signing';

/**
 * The sandbox ESP's people and codes (docs/signing.md): its gateway (sandbox-esp-gateway.ts) knows these Aadhaar
 * numbers, sends no real OTP and accepts the fixed one.
 */

/** The OTP the sandbox ESP "sends": always this. */
export const SANDBOX_OTP = '123456';
/** With auth mode 2 (biometric), the sandbox accepts this capture instead of an OTP. */
export const SANDBOX_BIOMETRIC = 'sandbox-biometric-ok';

/** The people the sandbox ESP knows: Verhoeff-valid numbers with their eKYC data (documented in docs/signing.md). */
export const SANDBOX_IDENTITIES: Record<string, AadhaarIdentity & { mobile: string }> = {
  '234123412346': {
    name: 'Asha Rao',
    state: 'Karnataka',
    pinCode: '560001',
    yearOfBirth: '1988',
    gender: 'F',
    aadhaarLast4: '2346',
    mobile: '9876543210',
  },
  '456745674566': {
    name: 'Vikram Singh',
    state: 'Maharashtra',
    pinCode: '400001',
    yearOfBirth: '1979',
    gender: 'M',
    aadhaarLast4: '4566',
    mobile: '9123456780',
  },
  '987698769870': {
    name: 'Meera Iyer',
    state: 'Tamil Nadu',
    pinCode: '600004',
    yearOfBirth: '1995',
    gender: 'F',
    aadhaarLast4: '9870',
    mobile: '9988776655',
  },
  '567856785670': {
    name: 'Mohammed Iqbal',
    state: 'Delhi',
    pinCode: '110001',
    yearOfBirth: '1983',
    gender: 'M',
    aadhaarLast4: '5670',
    mobile: '9012345678',
  },
  '345634563457': {
    name: 'Ravi Kumar Sharma',
    state: 'Uttar Pradesh',
    pinCode: '226001',
    yearOfBirth: '1990',
    gender: 'M',
    aadhaarLast4: '3457',
    mobile: '9090909090',
  },
};
