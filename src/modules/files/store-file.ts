import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../platform/ids';
import type { BlobStore } from '../../platform/storage/blob-store';
import { User } from '../users';
import { StoredFile, type FileKind } from './stored-file.entity';

/** What describes a new file; size, digest and blob key are derived. */
export interface NewFile {
  ownerId: string;
  kind: FileKind;
  name: string;
  mime: string;
  pageCount?: number;
  widthPx?: number;
  heightPx?: number;
}

export interface FileSlot {
  id: string;
  storageKey: string;
}

/**
 * A file id and its blob key, `files/<owner>/<file id>`, for bytes written before their row (outside the
 * transaction that records them). A key of its own per file: a late writer never overwrites another's bytes.
 */
export function reserveFileSlot(ownerId: string): FileSlot {
  const id = newId('file');
  return { id, storageKey: `files/${ownerId}/${id}` };
}

/** The one way a file row is made: persisted in `em` (the caller's transaction flushes it) with its blob key. */
export function newStoredFile(
  em: EntityManager,
  file: NewFile,
  content: { sizeBytes: number; sha256: string },
  slot: FileSlot = reserveFileSlot(file.ownerId),
): StoredFile {
  const { ownerId, ...described } = file;
  return em.create(StoredFile, { ...described, ...content, ...slot, user: em.getReference(User, ownerId) });
}

/** A file made by the service (a prepared or signed PDF, a stamp certificate, a captured photo): row and bytes. */
export async function storeBytes(
  blobs: BlobStore,
  em: EntityManager,
  file: NewFile,
  bytes: Uint8Array,
  slot?: FileSlot,
): Promise<StoredFile> {
  const row = newStoredFile(
    em,
    file,
    { sizeBytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') },
    slot,
  );
  await blobs.putBytes(row.storageKey, bytes, file.mime);
  return row;
}
