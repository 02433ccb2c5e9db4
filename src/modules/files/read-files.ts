import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import { checkPage, pageOf } from '../../platform/graphql/paging';
import type { Actor } from '../../platform/auth/actor';
import { StoredFile, type FileKind } from './stored-file.entity';

/** A file of the actor's; anyone else's is `not_found`, exactly like one that does not exist. */
export async function getOwnFile(em: EntityManager, actor: Actor, fileId: string): Promise<StoredFile> {
  const file = await em.findOne(StoredFile, { id: fileId, user: actor.userId });
  if (!file) throw new AppError('not_found', { errors: [{ field: 'client_id', problem: 'no such file' }] });
  return file;
}

export async function listOwnFiles(
  em: EntityManager,
  actor: Actor,
  args: { page: number; size: number; kind?: string | null },
): Promise<{ items: StoredFile[]; has_next: boolean }> {
  const { offset, limit } = checkPage(args);
  if (args.kind != null && args.kind !== 'pdf' && args.kind !== 'asset') {
    throw AppError.badRequest([{ field: 'kind', problem: 'must be pdf or asset' }]);
  }
  const rows = await em.find(
    StoredFile,
    { user: actor.userId, ...(args.kind ? { kind: args.kind as FileKind } : {}) },
    { orderBy: { createdAt: 'desc', seq: 'desc' }, offset, limit: limit + 1 },
  );
  return pageOf(rows, limit);
}
