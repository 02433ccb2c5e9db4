import { randomBytes } from 'node:crypto';
import { hashToken } from '../../../platform/auth/bearer';
import { SecretBox } from '../../../platform/crypto/secret-box';

/** 256 random bits; it opens one signer's page and signer actions, nothing else. */
export function newSignerToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

const boxes = new Map<string, SecretBox>();

/** One box per key for the process: deriving its key (HKDF) on every read cost more than opening the tokens. */
export function signerTokenBox(secretsEncryptionKey: string): SecretBox {
  let box = boxes.get(secretsEncryptionKey);
  if (!box) boxes.set(secretsEncryptionKey, (box = new SecretBox(secretsEncryptionKey, 'signer-token')));
  return box;
}

export function inviteUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/sign/${token}`;
}

/** A signer's invite_url, from the sealed token kept with the signer. */
export function signerInviteUrl(
  config: { publicUrl: string; secretsEncryptionKey: string },
  signer: { tokenSealed: string },
): string {
  return inviteUrl(config.publicUrl, signerTokenBox(config.secretsEncryptionKey).openText(signer.tokenSealed));
}
