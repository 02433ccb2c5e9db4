import { GraphQLUpload, type FileUpload } from 'graphql-upload-ts';
import { Arg, Ctx, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { RequestContext } from '../../platform/graphql/context';
import { TokenScope } from '../../platform/graphql/token-scope';
import { isUploadSizeLimit, refuseFailedUpload } from '../../platform/graphql/upload-argument';
import { malformedMultipart } from '../../platform/rest/multipart';
import { deletePfx, listOwnPfx, pfxTooLarge, uploadPfx } from './manage-pfx';
import { DeletedPfxType, PfxType, toPfxView } from './pfx.types';

/** A part that failed: over graphql-upload-ts's size limit, or a malformed or unfinished body. */
function uploadRefusal(error: unknown): unknown {
  return isUploadSizeLimit(error) ? pfxTooLarge() : malformedMultipart(error);
}

/** The part's bytes as the use case reads them (it applies its own size limit); transport failures become 4xx. */
async function* partContent(upload: FileUpload): AsyncIterable<Uint8Array> {
  try {
    for await (const chunk of upload.createReadStream()) yield chunk as Buffer;
  } catch (error) {
    throw uploadRefusal(error);
  }
}

@Resolver(() => PfxType)
export class PfxResolver {
  @TokenScope('sessions')
  @Mutation(() => PfxType, { description: 'Upload a PKCS#12 (.pfx/.p12) signing certificate with its password.' })
  @UseMiddleware(refuseFailedUpload(uploadRefusal))
  async uploadPfx(
    @Arg('file', () => GraphQLUpload) file: Promise<FileUpload>,
    @Arg('password', () => String) password: string,
    @Ctx() ctx: RequestContext,
  ): Promise<PfxType> {
    let upload: FileUpload;
    try {
      upload = await file;
    } catch (error) {
      throw uploadRefusal(error);
    }
    return toPfxView(
      await uploadPfx(ctx.em, ctx.services.untrusted, ctx.actor, ctx.services.config.secretsEncryptionKey, {
        filename: upload.filename,
        content: partContent(upload),
        password,
      }),
    );
  }

  @TokenScope('sessions')
  @Query(() => [PfxType], { description: 'Your signing certificates, newest first.' })
  async pfxCertificates(@Ctx() ctx: RequestContext): Promise<PfxType[]> {
    return (await listOwnPfx(ctx.em, ctx.actor)).map(toPfxView);
  }

  @TokenScope('sessions')
  @Mutation(() => DeletedPfxType, { description: 'Delete a signing certificate: its key is forgotten at once.' })
  async deletePfx(@Arg('pfx_id') pfxId: string, @Ctx() ctx: RequestContext): Promise<DeletedPfxType> {
    const deleted = await deletePfx(ctx.em, ctx.actor, pfxId);
    return { pfx_id: deleted.id, deleted_at: deleted.deletedAt! };
  }
}
