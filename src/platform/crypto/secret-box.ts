import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Authenticated encryption (AES-256-GCM) for secrets kept at rest: signer tokens, later PFX files.
 * The key is derived from SECRETS_ENCRYPTION_KEY with HKDF, one sub-key per purpose, so that a value
 * encrypted for one purpose cannot be replayed as another.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(secret: string, purpose: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'esign-estamp', purpose, 32));
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
  seal(plain: string | Uint8Array): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  open(sealed: string): Buffer {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
  }

  openText(sealed: string): string {
    return this.open(sealed).toString('utf8');
  }
}
