import { AppError } from '../../../platform/errors';
import type { Signer } from '../../esign/signer-side';
import type { OtpChannel } from './signer-otp.entity';

export function maskEmail(email: string): string {
  const [local, domain] = email.split('@');
  return `${local.slice(0, 1)}${'*'.repeat(Math.max(1, Math.min(local.length - 1, 6)))}@${domain}`;
}

export function maskPhone(phone: string): string {
  return `${'*'.repeat(Math.max(0, phone.length - 4))}${phone.slice(-4)}`;
}

export function recipientOf(signer: Signer, channel: OtpChannel): { to: string; shown: string } {
  if (channel === 'email') {
    if (!signer.email) throw new AppError('conflict', { message: 'this signer has no email address' });
    return { to: signer.email, shown: maskEmail(signer.email) };
  }
  if (!signer.mobile) throw new AppError('conflict', { message: 'this signer has no mobile number' });
  const to = `+${(signer.countryCode ?? '').replace(/^\+/, '')}${signer.mobile}`;
  return { to, shown: maskPhone(to) };
}
