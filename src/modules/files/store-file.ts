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

/**
 * Many file rows in one statement, in the caller's transaction: for work that makes files by the thousand (a stamp
 * order's certificates), where building an entity per row costs more than the row itself. The rows are what
 * `newStoredFile` would persist; nothing here is loaded into `em`.
 */
export async function insertStoredFiles(
  em: EntityManager,
  files: { file: NewFile; content: { sizeBytes: number; sha256: string }; slot: FileSlot }[],
): Promise<void> {
  if (files.length === 0) return;
  const rows = files.map(({ file, content, slot }) => ({
    id: slot.id,
    user_id: file.ownerId,
    kind: file.kind,
    name: file.name,
    mime: file.mime,
    size_bytes: content.sizeBytes,
    sha256: content.sha256,
    page_count: file.pageCount ?? null,
    width_px: file.widthPx ?? null,
    height_px: file.heightPx ?? null,
    storage_key: slot.storageKey,
  }));
  await em.getConnection().execute(
    `insert into files (id, user_id, kind, name, mime, size_bytes, sha256, page_count, width_px, height_px, storage_key)
     select id, user_id, kind, name, mime, size_bytes, sha256, page_count, width_px, height_px, storage_key
       from jsonb_to_recordset(?::jsonb) as v(id text, user_id text, kind text, name text, mime text, size_bytes bigint,
            sha256 text, page_count int, width_px int, height_px int, storage_key text)`,
    [JSON.stringify(rows)],
    'run',
    em.getTransactionContext(),
  );
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
