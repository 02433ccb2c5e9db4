import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors';

/** One blob of a bundle, under its name inside the ZIP. */
export interface BundleEntry {
  key: string;
  filename: string;
}

interface GrantTerms {
  filename: string;
  contentType: string;
  /** Unix seconds. */
  expiresAt: number;
}

/** What a download link grants: one blob (`key`), or a ZIP of several (`entries`), under a file name and type, until a moment. */
export type DownloadGrant = GrantTerms & ({ key: string; entries?: undefined } | { entries: BundleEntry[]; key?: undefined });

export const DOWNLOAD_PATH = '/downloads';
export const ZIP_CONTENT_TYPE = 'application/zip';

/** The grant as the link carries it: `[key, filename, contentType, expiresAt]`, or for a bundle `[[[key, filename], ...], ...]`. */
type Payload = [string | [string, string][], string, string, number];

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

  /** A link to one blob. */
  issue(
    grant: { key: string; filename: string; contentType: string },
    ttlSeconds: number,
    now = Date.now(),
  ): { url: string; expires_in: number } {
    return this.link([grant.key, grant.filename, grant.contentType, expiresAt(now, ttlSeconds)], ttlSeconds);
  }

  /** A link to a ZIP of several blobs, made as it is downloaded (serve-download.ts), each entry under its own name. */
  issueBundle(
    bundle: { entries: BundleEntry[]; filename: string },
    ttlSeconds: number,
    now = Date.now(),
  ): { url: string; expires_in: number } {
    const entries = bundle.entries.map((entry): [string, string] => [entry.key, entry.filename]);
    return this.link([entries, bundle.filename, ZIP_CONTENT_TYPE, expiresAt(now, ttlSeconds)], ttlSeconds);
  }

  private link(grant: Payload, ttlSeconds: number): { url: string; expires_in: number } {
    const payload = Buffer.from(JSON.stringify(grant)).toString('base64url');
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
    const [what, filename, contentType, expiresAt] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Payload;
    if (Math.floor(now / 1000) >= expiresAt) throw new AppError('download_link_expired');
    if (typeof what === 'string') return { key: what, filename, contentType, expiresAt };
    return { entries: what.map(([key, name]) => ({ key, filename: name })), filename, contentType, expiresAt };
  }
}

function expiresAt(now: number, ttlSeconds: number): number {
  return Math.floor(now / 1000) + ttlSeconds;
}
