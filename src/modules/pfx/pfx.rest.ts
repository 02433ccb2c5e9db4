import { AppError } from '../../platform/errors';
import { receiveSmallForm } from '../../platform/rest/multipart';
import { findControlCharacters } from '../../platform/validation/text';
import type { RestRoute } from '../../platform/rest/route';
import { MAX_PFX_BYTES, uploadPfx } from './manage-pfx';
import { toPfxView } from './pfx.types';

export const pfxRestRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/pfx/upload',
    operation: 'Mutation.uploadPfx',
    summary: 'Upload a PKCS#12 signing certificate (multipart parts `file` and `password`); answers its `pfx_id`.',
    multipart: {
      parts: {
        file: { description: 'The .pfx/.p12 file (RSA key), at most 256 KB.', binary: true, required: true },
        password: { description: 'The file’s password (not kept).', required: true },
      },
      async handle(services, actor, req) {
        // The form is held in memory: read no more than the use case would take.
        const form = await receiveSmallForm(req, MAX_PFX_BYTES);
        const problems = findControlCharacters(form.fields, '');
        if (problems.length > 0) throw AppError.badRequest(problems);
        if (!form.file)
          throw new AppError('file_empty', { errors: [{ field: 'file', problem: 'no multipart part named file' }] });
        const credential = await uploadPfx(
          services.orm.em.fork(),
          services.untrusted,
          actor,
          services.config.secretsEncryptionKey,
          {
            filename: form.file.filename,
            content: [form.file.bytes],
            password: form.fields.password,
          },
        );
        return toPfxView(credential);
      },
    },
  },
];
