import { GraphQLUpload, type FileUpload } from 'graphql-upload-ts';
import { Arg, Ctx, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import { AppError } from '../../platform/errors';
import type { RequestContext } from '../../platform/graphql/context';
import { isUploadSizeLimit, refuseFailedUpload } from '../../platform/graphql/upload-argument';
import { malformedMultipart } from '../../platform/rest/multipart';
import { deletePfx, listOwnPfx, MAX_PFX_BYTES, uploadPfx } from './manage-pfx';
import { DeletedPfxType, PfxType, toPfxView } from './pfx.types';

const tooLarge = () =>
  new AppError('file_too_large', { errors: [{ field: 'file', problem: `larger than ${MAX_PFX_BYTES} bytes` }] });

/** A part that failed: over graphql-upload-ts's size limit, or a malformed or unfinished body. */
function uploadRefusal(error: unknown): unknown {
  return isUploadSizeLimit(error) ? tooLarge() : malformedMultipart(error);
}

async function readUpload(file: Promise<FileUpload>): Promise<{ filename: string; bytes: Buffer }> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const upload = await file;
    for await (const chunk of upload.createReadStream()) {
      size += (chunk as Buffer).length;
      if (size > MAX_PFX_BYTES) throw tooLarge();
      chunks.push(chunk as Buffer);
    }
    return { filename: upload.filename, bytes: Buffer.concat(chunks) };
  } catch (error) {
    throw uploadRefusal(error);
  }
}

@Resolver(() => PfxType)
export class PfxResolver {
  @Mutation(() => PfxType, { description: 'Upload a PKCS#12 (.pfx/.p12) signing certificate with its password.' })
  @UseMiddleware(refuseFailedUpload(uploadRefusal))
  async uploadPfx(
    @Arg('file', () => GraphQLUpload) file: Promise<FileUpload>,
    @Arg('password', () => String) password: string,
    @Ctx() ctx: RequestContext,
  ): Promise<PfxType> {
    const upload = await readUpload(file);
    return toPfxView(
      await uploadPfx(ctx.em, ctx.services.untrusted, ctx.actor, ctx.services.config.secretsEncryptionKey, {
        ...upload,
        password,
      }),
    );
  }

  @Query(() => [PfxType], { description: 'Your signing certificates, newest first.' })
  async pfxCertificates(@Ctx() ctx: RequestContext): Promise<PfxType[]> {
    return (await listOwnPfx(ctx.em, ctx.actor)).map(toPfxView);
  }

  @Mutation(() => DeletedPfxType, { description: 'Delete a signing certificate: its key is forgotten at once.' })
  async deletePfx(@Arg('pfx_id') pfxId: string, @Ctx() ctx: RequestContext): Promise<DeletedPfxType> {
    const deleted = await deletePfx(ctx.em, ctx.actor, pfxId);
    return { pfx_id: deleted.id, deleted_at: deleted.deletedAt! };
  }
}
