import type { EntityManager } from '@mikro-orm/postgresql';
import { StoredFile } from '../../files';
import { PfxCredential } from '../../pfx';
import type { Actor } from '../../../platform/auth/actor';
import type { Problems } from '../../../platform/validation/problems';
import { assetOf } from '../elements/values';
import { documentIndex, type RequestedDocument } from './plan-documents';
import type { DocumentPlan, SignerPlan } from './session-plan';

/** Where a plan finds what a request refers to, always among the caller's own. */
export interface SessionReferences {
  /** The caller's files among `ids` (PDFs and assets). */
  files(ids: string[]): Promise<StoredFile[]>;
  /** Which of `ids` are the caller's PFX credentials, not deleted. */
  pfxIds(ids: string[]): Promise<Set<string>>;
}

/** Read for one request: one query per kind of reference. */
export function referencesOf(em: EntityManager, actor: Actor): SessionReferences {
  return {
    files: (ids) => em.find(StoredFile, { id: ids, user: actor.userId }),
    pfxIds: async (ids) =>
      new Set((await em.find(PfxCredential, { id: ids, user: actor.userId, deletedAt: null })).map((pfx) => pfx.id)),
  };
}

/**
 * Read once for many requests of one caller (a bulk's chunk of rows, planned in one transaction): each id is looked
 * up the first time a request names it, and the answer (found or not) stands for the rest.
 */
export function cachedReferences(em: EntityManager, actor: Actor): SessionReferences {
  const direct = referencesOf(em, actor);
  const files = new Map<string, StoredFile | null>();
  const pfx = new Map<string, boolean>();
  return {
    async files(ids) {
      const unknown = ids.filter((id) => !files.has(id));
      if (unknown.length > 0) {
        const found = await direct.files(unknown);
        for (const id of unknown) files.set(id, null);
        for (const file of found) files.set(file.id, file);
      }
      return ids.map((id) => files.get(id)).filter((file): file is StoredFile => !!file);
    },
    async pfxIds(ids) {
      const unknown = ids.filter((id) => !pfx.has(id));
      if (unknown.length > 0) {
        const owned = await direct.pfxIds(unknown);
        for (const id of unknown) pfx.set(id, owned.has(id));
      }
      return new Set(ids.filter((id) => pfx.get(id)));
    },
  };
}

/**
 * What the request refers to (the PDFs, face references, image assets, PFX credentials) must exist and be the
 * caller's; each element's page must be on its document.
 */
export async function checkReferences(
  references: SessionReferences,
  problems: Problems,
  requested: RequestedDocument[],
  signers: (SignerPlan | undefined)[],
): Promise<DocumentPlan[]> {
  const referenced = new Set<string>(requested.map((document) => document.fileId));
  signers.forEach((signer) => {
    if (signer?.faceMatch.ref_file_id) referenced.add(signer.faceMatch.ref_file_id);
    for (const asset of signer?.elements.map(assetOf) ?? []) if (asset) referenced.add(asset);
  });
  const files = new Map((await references.files([...referenced])).map((file) => [file.id, file] as const));
  const documents = requested.map((document) => {
    const file = files.get(document.fileId);
    if (!file || file.kind !== 'pdf') {
      problems.invalidField(document.field, file ? 'is not a PDF uploaded with upload-pdf' : 'no such PDF among your files');
      problems.fileId = true;
      return undefined;
    }
    return { file, name: document.name ?? file.name };
  });
  signers.forEach((signer, index) => {
    if (!signer) return;
    const field = `signers[${index}]`;
    const faceRef = signer.faceMatch.ref_file_id;
    if (faceRef && files.get(faceRef)?.kind !== 'asset')
      problems.invalidField(`${field}.face_ref_file_id`, 'no such asset among your files');
    signer.elements.forEach((element, elementIndex) => {
      const at = `${field}.elements[${elementIndex}]`;
      const on = documentIndex(problems, `${at}.document`, element.document, requested.length);
      if (on === undefined) return;
      const file = documents[on]?.file;
      if (file?.pageCount !== undefined && element.page >= file.pageCount) {
        problems.invalidField(`${at}.page`, `the PDF has ${file.pageCount} page(s): pages are 0 to ${file.pageCount - 1}`);
      }
      const asset = assetOf(element);
      if (asset && files.get(asset)?.kind !== 'asset') {
        problems.invalidField(`${at}.value`, 'must be the client_id of one of your uploaded assets');
      }
    });
  });
  await checkPfxOwnership(references, problems, signers);
  return documents.filter((document): document is DocumentPlan => document !== undefined);
}

async function checkPfxOwnership(
  references: SessionReferences,
  problems: Problems,
  signers: (SignerPlan | undefined)[],
): Promise<void> {
  const pfxIds = [...new Set(signers.map((signer) => signer?.pfxId).filter((id): id is string => !!id?.startsWith('pfx_')))];
  if (pfxIds.length === 0) return;
  const owned = await references.pfxIds(pfxIds);
  signers.forEach((signer, index) => {
    if (signer?.pfxId?.startsWith('pfx_') && !owned.has(signer.pfxId))
      problems.invalidField(`signers[${index}].pfx_id`, 'no such PFX among yours (POST /api/v1/pfx/upload)');
  });
}
