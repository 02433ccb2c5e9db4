import { AppError } from '../../platform/errors';
import { receiveMultipartFile } from '../../platform/rest/multipart';
import type { RestRoute } from '../../platform/rest/route';
import { ASSET_ERROR_MESSAGES } from './inspect-image';
import { toUploadedFile } from './file.types';
import { uploadFile } from './upload-file';
import type { FileKind } from './stored-file.entity';

function multipartUpload(kind: FileKind, description: string): NonNullable<RestRoute['multipart']> {
  return {
    parts: { file: { description, binary: true, required: true } },
    async handle(services, actor, req) {
      const received = await receiveMultipartFile(req);
      if (!received) {
        throw kind === 'pdf'
          ? new AppError('file_empty', { errors: [{ field: 'file', problem: 'no multipart part named file' }] })
          : new AppError('file_empty', {
              message: ASSET_ERROR_MESSAGES.empty,
              errors: [{ field: 'file', problem: 'no multipart part named file' }],
            });
      }
      try {
        const stored = await uploadFile(
          { em: services.orm.em.fork(), blobs: services.blobs, untrusted: services.untrusted },
          actor,
          kind,
          received,
        );
        return toUploadedFile(stored);
      } finally {
        received.release();
      }
    },
  };
}

export const fileRestRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/files/upload-pdf',
    operation: 'Mutation.uploadPdf',
    summary: 'Upload a PDF (multipart part `file`, at most 50 MB, not password-protected).',
    multipart: multipartUpload('pdf', 'The PDF, at most 50 MB (52,428,800 bytes).'),
  },
  {
    method: 'POST',
    path: '/files/upload-asset',
    operation: 'Mutation.uploadAsset',
    summary: 'Upload a JPEG or PNG image (multipart part `file`, at most 10 MB).',
    multipart: multipartUpload('asset', 'A JPEG or PNG image, at most 10 MB.'),
  },
  {
    method: 'GET',
    path: '/files/details',
    operation: 'Query.file',
    summary: 'One of your files, with a short-lived download link.',
  },
  {
    method: 'GET',
    path: '/files/list',
    operation: 'Query.files',
    summary: 'Your files, newest first (`page` from 1, `size` 1 to 100, optional `kind`).',
  },
];
