import type { Readable } from 'node:stream';

/** Where file bytes live. Keys are service-made paths such as `files/user_x/file_y`. */
export interface BlobStore {
  /** Stores the file at `sourcePath` under `key` (streamed: never loaded whole). */
  putFile(key: string, sourcePath: string, contentType: string): Promise<void>;
  putBytes(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  getStream(key: string): Promise<Readable>;
  getBytes(key: string): Promise<Buffer>;
  /** Size in bytes, or null when there is no such blob. */
  stat(key: string): Promise<{ size: number } | null>;
  delete(key: string): Promise<void>;
  /** Cheap reachability check for /readyz. */
  check(): Promise<void>;
}

/** Keys are made by the service, but are still checked so that no key can leave the store's root. */
export function assertSafeKey(key: string): void {
  if (!/^[A-Za-z0-9_\-]+(\/[A-Za-z0-9_\-.]+)*$/.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
    throw new Error(`unsafe blob key: ${key}`);
  }
}
