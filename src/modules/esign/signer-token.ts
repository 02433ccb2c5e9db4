import { randomBytes } from 'node:crypto';
import { hashToken } from '../../platform/auth/bearer';
import { SecretBox } from '../../platform/crypto/secret-box';

/** 256 random bits; it opens one signer's page and signer actions, nothing else. */
export function newSignerToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

export function signerTokenBox(secretsEncryptionKey: string): SecretBox {
  return new SecretBox(secretsEncryptionKey, 'signer-token');
}

export function inviteUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/sign/${token}`;
}
