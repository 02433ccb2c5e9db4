import { createReadStream } from 'node:fs';
import { access, copyFile, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { assertSafeKey, type BlobStore } from './blob-store';

const PROCESS_TAG = randomBytes(6).toString('hex');

/** Blobs as files under one directory; writes go to a temporary name first so readers never see half a file. */
export class LocalBlobStore implements BlobStore {
  private written = 0;

  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    assertSafeKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  /**
   * Writes to a temporary name first, then renames. The directory is made only when the write finds it missing: a
   * stamp order writes thousands of certificates into one directory, and a `mkdir` before each was a tenth of it.
   * Temporary names are this process's random tag and a counter, unique without drawing random bytes per write.
   */
  private async writeAtomically(key: string, write: (tmp: string) => Promise<void>): Promise<void> {
    const target = this.pathOf(key);
    const tmp = `${target}.${PROCESS_TAG}${(this.written++).toString(36)}.partial`;
    try {
      try {
        await write(tmp);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        await mkdir(path.dirname(target), { recursive: true });
        await write(tmp);
      }
      await rename(tmp, target);
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
  }

  /** Copied by the kernel (copy_file_range, or a reflink where the file system shares blocks), not through streams. */
  putFile(key: string, sourcePath: string): Promise<void> {
    return this.writeAtomically(key, (tmp) => copyFile(sourcePath, tmp));
  }

  putBytes(key: string, bytes: Uint8Array): Promise<void> {
    return this.writeAtomically(key, (tmp) => writeFile(tmp, bytes));
  }

  async getStream(key: string): Promise<Readable> {
    const file = this.pathOf(key);
    await access(file);
    return createReadStream(file);
  }

  getBytes(key: string): Promise<Buffer> {
    return readFile(this.pathOf(key));
  }

  async stat(key: string): Promise<{ size: number } | null> {
    try {
      const info = await stat(this.pathOf(key));
      return { size: info.size };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await access(this.root);
  }
}
