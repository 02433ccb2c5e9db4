import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors';

/** What a download link grants: one blob, under a file name and type, until a moment. */
export interface DownloadGrant {
  key: string;
  filename: string;
  contentType: string;
  /** Unix seconds. */
  expiresAt: number;
}

export const DOWNLOAD_PATH = '/downloads';

/**
 * Short-lived download links that need no credential: the grant is in the URL, an HMAC-SHA256 of it
 * proves the service issued it. Any change to the grant or the signature makes the link invalid.
 */
export class UrlSigner {
  constructor(
    private readonly secret: string,
    private readonly publicUrl: string,
  ) {}

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url');
  }

  issue(grant: Omit<DownloadGrant, 'expiresAt'>, ttlSeconds: number, now = Date.now()): { url: string; expires_in: number } {
    const full: DownloadGrant = { ...grant, expiresAt: Math.floor(now / 1000) + ttlSeconds };
    const payload = Buffer.from(JSON.stringify([full.key, full.filename, full.contentType, full.expiresAt])).toString(
      'base64url',
    );
    return { url: `${this.publicUrl}${DOWNLOAD_PATH}/${payload}.${this.sign(payload)}`, expires_in: ttlSeconds };
  }

  /** Checks a `<payload>.<signature>` token from a download path; throws the documented refusal. */
  verify(token: string, now = Date.now()): DownloadGrant {
    const dot = token.lastIndexOf('.');
    const payload = token.slice(0, dot);
    // Compared as text: decoding base64url first would ignore the unused low bits of the last character,
    // so several spellings of one signature would pass.
    const given = Buffer.from(token.slice(dot + 1), 'utf8');
    const expected = Buffer.from(this.sign(payload), 'utf8');
    if (dot <= 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new AppError('invalid_download_link');
    }
    const [key, filename, contentType, expiresAt] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [
      string,
      string,
      string,
      number,
    ];
    if (Math.floor(now / 1000) >= expiresAt) throw new AppError('download_link_expired');
    return { key, filename, contentType, expiresAt };
  }
}
