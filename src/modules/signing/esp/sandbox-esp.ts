import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../../platform/crypto/secret-box';
import { AppError } from '../../../platform/errors';
import { aadhaarSubject, issueSigningCertificate, type AadhaarIdentity } from '../certificates';
import { signDetachedCms } from '../cms-sign';
import { sandboxEspCa, sandboxRevocationPointers } from '../sandbox-ca';
import { SandboxEspTransaction } from './esp-transaction.entity';
import type { EspAuthentication, EspBackend, EspContext, EspTransactionStarted } from './esp';

/** The OTP the sandbox ESP "sends": always this. */
export const SANDBOX_OTP = '123456';
/** With auth mode 2 (biometric), the sandbox accepts this capture instead of an OTP. */
export const SANDBOX_BIOMETRIC = 'sandbox-biometric-ok';
const TRANSACTION_SECONDS = 600;
const CERTIFICATE_MINUTES = 30;

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

const box = (ctx: EspContext) => new SecretBox(ctx.services.config.secretsEncryptionKey, 'sandbox-esp');

/** A simulated ESP with its own sandbox CA, for `backend: sandbox`. Production refuses it unless allowed. */
export class SandboxEsp implements EspBackend {
  readonly name = 'sandbox';

  async startTransaction(
    ctx: EspContext,
    input: { aadhaar: string; authMode: number; signerId: string },
  ): Promise<EspTransactionStarted> {
    const identity = SANDBOX_IDENTITIES[input.aadhaar];
    if (!identity) {
      throw new AppError('aadhaar_not_enrolled', {
        errors: [{ field: 'aadhaar_number', problem: 'not one of the sandbox identities (see docs/signing.md)' }],
      });
    }
    const transaction = ctx.em.create(SandboxEspTransaction, {
      id: `esptx_${randomBytes(16).toString('hex')}`,
      signerId: input.signerId,
      aadhaarSealed: box(ctx).seal(input.aadhaar),
      authMode: input.authMode,
      expiresAt: new Date(Date.now() + TRANSACTION_SECONDS * 1000),
    });
    await ctx.em.persistAndFlush(transaction);
    return { transactionId: transaction.id, otpSentTo: `XXXXXX${identity.mobile.slice(-4)}`, expiresAt: transaction.expiresAt };
  }

  async authenticate(
    ctx: EspContext,
    input: { transactionId: string; signerId: string; otp: string },
  ): Promise<EspAuthentication> {
    const transaction = await ctx.em.findOne(SandboxEspTransaction, {
      id: input.transactionId,
      signerId: input.signerId,
      usedAt: null,
    });
    if (!transaction) return { ok: false, reason: 'transaction_unknown' };
    if (transaction.expiresAt.getTime() <= Date.now()) return { ok: false, reason: 'otp_expired' };
    const expected = transaction.authMode === 2 ? SANDBOX_BIOMETRIC : SANDBOX_OTP;
    if (input.otp !== expected) return { ok: false, reason: 'otp_invalid' };
    transaction.authenticatedAt = new Date();
    await ctx.em.flush();
    return { ok: true };
  }

  async sign(
    ctx: EspContext,
    input: { transactionId: string; content: readonly Uint8Array[] },
  ): Promise<{ cms: Uint8Array; certificatePem: string }> {
    const transaction = await ctx.em.findOneOrFail(SandboxEspTransaction, { id: input.transactionId, usedAt: null });
    if (!transaction.authenticatedAt) throw new Error('the transaction is not authenticated');
    const aadhaar = box(ctx).openText(transaction.aadhaarSealed);
    const { mobile: _mobile, ...identity } = SANDBOX_IDENTITIES[aadhaar];
    const ca = await sandboxEspCa(ctx.services, ctx.em);
    const now = Date.now();
    const holder = issueSigningCertificate(
      { privateKeyPem: ca.privateKeyPem, certificatePem: ca.certificatePem },
      aadhaarSubject(identity),
      {
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + CERTIFICATE_MINUTES * 60_000),
      },
      { revocation: sandboxRevocationPointers(ctx.services, 'esp') },
    );
    const cms = await signDetachedCms(input.content, {
      privateKeyPem: holder.privateKeyPem,
      certificatePem: holder.certificatePem,
      chainPems: [ca.certificatePem, ...ca.chainPems],
    });
    // The transaction is spent, and the number forgotten.
    transaction.usedAt = new Date();
    transaction.aadhaarSealed = '';
    await ctx.em.flush();
    return { cms, certificatePem: holder.certificatePem };
  }
}

export const espBackends: Record<string, EspBackend> = { sandbox: new SandboxEsp() };
