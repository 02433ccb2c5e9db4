import { GraphQLUpload, type FileUpload } from 'graphql-upload-ts';
import { Arg, Args, Ctx, FieldResolver, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { RequestContext } from '../../platform/graphql/context';
import { PageArgs } from '../../platform/graphql/paging';
import { FileInfoType, FilePageType, UploadedFileType, toFileInfo, toUploadedFile } from './file.types';
import { getOwnFile, listOwnFiles } from './read-files';
import { uploadFile } from './upload-file';
import type { FileKind } from './stored-file.entity';

async function uploadFrom(ctx: RequestContext, kind: FileKind, file: Promise<FileUpload>): Promise<UploadedFileType> {
  const upload = await file;
  const stored = await uploadFile({ em: ctx.em, blobs: ctx.services.blobs }, ctx.actor, kind, {
    filename: upload.filename,
    stream: upload.createReadStream(),
  });
  return toUploadedFile(stored);
}

@Resolver(() => FileInfoType)
export class FileResolver {
  @Mutation(() => UploadedFileType, { description: 'Upload a PDF (at most 50 MB, not password-protected).' })
  uploadPdf(@Arg('file', () => GraphQLUpload) file: Promise<FileUpload>, @Ctx() ctx: RequestContext): Promise<UploadedFileType> {
    return uploadFrom(ctx, 'pdf', file);
  }

  @Mutation(() => UploadedFileType, { description: 'Upload a JPEG or PNG image (at most 10 MB).' })
  uploadAsset(
    @Arg('file', () => GraphQLUpload) file: Promise<FileUpload>,
    @Ctx() ctx: RequestContext,
  ): Promise<UploadedFileType> {
    return uploadFrom(ctx, 'asset', file);
  }

  @Query(() => FileInfoType, { description: 'One of your files.' })
  async file(@Arg('client_id') clientId: string, @Ctx() ctx: RequestContext): Promise<FileInfoType> {
    return toFileInfo(await getOwnFile(ctx.em, ctx.actor, clientId));
  }

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
