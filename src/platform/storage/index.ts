import type { AppConfig } from '../../config';
import type { BlobStore } from './blob-store';
import { LocalBlobStore } from './local-blob-store';
import { S3BlobStore } from './s3-blob-store';

export function createBlobStore(storage: AppConfig['storage']): BlobStore {
  return storage.driver === 's3' ? new S3BlobStore(storage) : new LocalBlobStore(storage.dir);
}
