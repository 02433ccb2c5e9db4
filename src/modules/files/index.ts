/** files: uploaded PDFs and image assets, checked in the worker pool and kept in the blob store. */
import type { ModuleManifest } from '../../platform/module';
import { fileLoaders } from './file.loaders';
import { FileResolver } from './file.resolver';
import { fileRestRoutes } from './files.rest';
import { StoredFile } from './stored-file.entity';

export { FileInfoType, toFileInfo } from './file.types';
export type { ImageFacts } from './inspect-image';
export { insertStoredFiles, newStoredFile, reserveFileSlot, storeBytes, type FileSlot, type NewFile } from './store-file';
export { StoredFile, type FileKind } from './stored-file.entity';
export { MAX_PDF_BYTES } from './upload-file';

export const filesModule: ModuleManifest = {
  name: 'files',
  entities: [StoredFile],
  resolvers: [FileResolver],
  restRoutes: fileRestRoutes,
  loaders: fileLoaders,
};
