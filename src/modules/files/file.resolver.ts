import { GraphQLUpload, type FileUpload } from 'graphql-upload-ts';
import { Arg, Args, Ctx, FieldResolver, Mutation, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import type { RequestContext } from '../../platform/graphql/context';
import { TokenScope } from '../../platform/graphql/token-scope';
import { PageArgs } from '../../platform/graphql/paging';
import { refuseFailedUpload } from '../../platform/graphql/upload-argument';
import { FileInfoType, FilePageType, UploadedFileType, toFileInfo, toUploadedFile } from './file.types';
import { getOwnFile, listOwnFiles } from './read-files';
import type { IncomingFile } from '../../platform/rest/multipart';
import { uploadFile, uploadStreamRefusal } from './upload-file';
import type { FileKind } from './stored-file.entity';

async function uploadFrom(ctx: RequestContext, kind: FileKind, file: Promise<FileUpload>): Promise<UploadedFileType> {
  let incoming: IncomingFile;
  try {
    // createReadStream throws when the part already failed (or the request is over).
    const upload = await file;
    incoming = { filename: upload.filename, stream: upload.createReadStream() };
  } catch (error) {
    throw uploadStreamRefusal(kind, error);
  }
  const stored = await uploadFile(
    { em: ctx.em, blobs: ctx.services.blobs, untrusted: ctx.services.untrusted },
    ctx.actor,
    kind,
    incoming,
  );
  return toUploadedFile(stored);
}

@Resolver(() => FileInfoType)
export class FileResolver {
  @TokenScope('sessions')
  @Mutation(() => UploadedFileType, { description: 'Upload a PDF (at most 50 MB, not password-protected).' })
  @UseMiddleware(refuseFailedUpload((error) => uploadStreamRefusal('pdf', error)))
  uploadPdf(@Arg('file', () => GraphQLUpload) file: Promise<FileUpload>, @Ctx() ctx: RequestContext): Promise<UploadedFileType> {
    return uploadFrom(ctx, 'pdf', file);
  }

  @TokenScope('sessions')
  @Mutation(() => UploadedFileType, { description: 'Upload a JPEG or PNG image (at most 10 MB).' })
  @UseMiddleware(refuseFailedUpload((error) => uploadStreamRefusal('asset', error)))
  uploadAsset(
    @Arg('file', () => GraphQLUpload) file: Promise<FileUpload>,
    @Ctx() ctx: RequestContext,
  ): Promise<UploadedFileType> {
    return uploadFrom(ctx, 'asset', file);
  }

  @TokenScope('sessions')
  @Query(() => FileInfoType, { description: 'One of your files.' })
  async file(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<FileInfoType> {
    return toFileInfo(await getOwnFile(ctx.em, ctx.actor, clientId));
  }

  @TokenScope('sessions')
  @Query(() => FilePageType, { description: 'Your files, newest first.' })
  async files(
    @Args() paging: PageArgs,
    @Arg('kind', () => String, { nullable: true, description: '`pdf` or `asset`.' }) kind: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<FilePageType> {
    const page = await listOwnFiles(ctx.em, ctx.actor, { ...paging, kind });
    return { items: page.items.map(toFileInfo), has_next: page.has_next };
  }

  @FieldResolver(() => String, {
    description: 'A short-lived signed link to the bytes (DOWNLOAD_URL_TTL_SECONDS); no credential needed to fetch it.',
  })
  download_url(@Root() file: FileInfoType, @Ctx() ctx: RequestContext): string {
    const { config, urls } = ctx.services;
    return urls.issue({ key: file.storage_key!, filename: file.name, contentType: file.mime }, config.downloadUrlTtlSeconds).url;
  }
}
