import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { isUploadSizeLimit } from '../../platform/graphql/upload-argument';
import { malformedMultipart, type IncomingFile } from '../../platform/rest/multipart';
import type { BlobStore } from '../../platform/storage/blob-store';
import { SpoolLimitExceeded, spoolToTempFile } from '../../platform/storage/spool';
import type { Actor } from '../../platform/auth/actor';
import type { WorkerPool } from '../../platform/workers/worker-pool';
import { ASSET_ERROR_MESSAGES, type ImageFacts } from './inspect-image';
import type { PdfFacts } from './inspect-pdf';
import { newStoredFile } from './store-file';
import type { FileKind, StoredFile } from './stored-file.entity';

/** 50 MB, the contract's limit: a file of exactly this size is accepted, one byte more is refused. */
export const MAX_PDF_BYTES = 50 * 1024 * 1024;
/** Assets are signature images and face photos; 10 MB is generous for either. */
export const MAX_ASSET_BYTES = 10 * 1024 * 1024;

export const UPLOAD_LIMITS: Record<FileKind, number> = { pdf: MAX_PDF_BYTES, asset: MAX_ASSET_BYTES };

export interface UploadDeps {
  em: EntityManager;
  blobs: BlobStore;
  /** Parses and inspects the uploaded bytes off the event loop. */
  untrusted: WorkerPool;
}

/** One code path for both faces: REST multipart and the GraphQL multipart request. */
export async function uploadFile(deps: UploadDeps, actor: Actor, kind: FileKind, incoming: IncomingFile): Promise<StoredFile> {
  const limit = UPLOAD_LIMITS[kind];
  let spooled;
  try {
    spooled = await spoolToTempFile(incoming.stream, limit);
  } catch (error) {
    throw uploadStreamRefusal(kind, error);
  }
  try {
    // The file part ended well; the form around it must too (a final boundary, no truncated part after it).
    if (incoming.complete) await incoming.complete;
    if (spooled.size === 0) {
      throw kind === 'pdf'
        ? new AppError('file_empty', { errors: [{ field: 'file', problem: 'no bytes' }] })
        : new AppError('file_empty', { message: ASSET_ERROR_MESSAGES.empty, errors: [{ field: 'file', problem: 'no bytes' }] });
    }
    // Parsing an uploaded PDF can take seconds (and a crafted image header was once a 110 s decode): the
    // worker pool does it, within its time and memory budget. The thread reads the spooled file itself, so the
    // upload is in memory once, in the thread that parses it.
    const facts =
      kind === 'pdf'
        ? { mime: 'application/pdf', ...(await deps.untrusted.run<PdfFacts>('inspectPdfFileTask', spooled.path)) }
        : await deps.untrusted.run<ImageFacts>('inspectImageFileTask', spooled.path);

    const file = newStoredFile(
      deps.em,
      {
        ownerId: actor.userId,
        kind,
        name: cleanFileName(incoming.filename, kind),
        mime: facts.mime,
        pageCount: 'pageCount' in facts ? facts.pageCount : undefined,
        widthPx: 'width' in facts ? facts.width : undefined,
        heightPx: 'height' in facts ? facts.height : undefined,
      },
      { sizeBytes: spooled.size, sha256: spooled.sha256 },
    );
    await deps.blobs.putFile(file.storageKey, spooled.path, facts.mime);
    try {
      await deps.em.persistAndFlush(file);
    } catch (error) {
      await deps.blobs.delete(file.storageKey).catch(() => undefined);
      throw error;
    }
    return file;
  } finally {
    await spooled.discard();
  }
}

/**
 * What a failure to receive the upload means for the client. Over the limit: `file_too_large`. The body
 * ended inside the part, was malformed, or the client went away (busboy's "Unexpected end of form",
 * graphql-upload-ts's errors, a premature close): `bad_request` naming the body. A system error (the
 * temporary file could not be written or read) is a fault of the service and stays what it is (a 500).
 */
export function uploadStreamRefusal(kind: FileKind, error: unknown): unknown {
  if (error instanceof SpoolLimitExceeded || isUploadSizeLimit(error)) {
    return new AppError('file_too_large', {
      errors: [{ field: 'file', problem: `larger than ${UPLOAD_LIMITS[kind]} bytes` }],
    });
  }
  if (error instanceof AppError) return error;
  if (isSystemError(error)) return error;
  return malformedMultipart(error);
}

/** Node's errors from the operating system (ENOSPC, EACCES...) carry the failed system call. */
function isSystemError(error: unknown): boolean {
  const e = error as { syscall?: unknown; errno?: unknown } | undefined;
  return typeof e?.syscall === 'string' || typeof e?.errno === 'number';
}

/** Keeps the uploader's name for display, without directories, control characters or unbounded length. */
export function cleanFileName(name: string | undefined, kind: FileKind): string {
  const base = path.posix.basename((name ?? '').replace(/\\/g, '/'));
  const cleaned = base
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 255);
  return cleaned || (kind === 'pdf' ? 'document.pdf' : 'asset');
}
