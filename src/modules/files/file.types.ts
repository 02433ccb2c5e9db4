import { Field, Int, ObjectType } from 'type-graphql';
import { PageOf } from '../../platform/graphql/page-type';
import type { StoredFile } from './stored-file.entity';

/** The contract's UploadedFile: the data of both upload operations. */
@ObjectType('UploadedFile', { simpleResolvers: true })
export class UploadedFileType {
  @Field()
  user_id!: string;

  @Field({ description: 'The file identifier, `file_...`.' })
  client_id!: string;

  @Field({ description: 'Original file name.' })
  name!: string;

  @Field({ description: 'Media type detected from the bytes: application/pdf, image/png or image/jpeg.' })
  mime!: string;
}

@ObjectType('FileInfo', { simpleResolvers: true, description: 'An uploaded file with everything the service knows about it.' })
export class FileInfoType extends UploadedFileType {
  @Field({ description: '`pdf` (from upload-pdf) or `asset` (from upload-asset).' })
  kind!: string;

  @Field(() => Int)
  size_bytes!: number;

  @Field({ description: 'SHA-256 of the bytes, hex.' })
  sha256!: string;

  @Field(() => Int, { nullable: true, description: 'PDFs only.' })
  page_count!: number | null;

  @Field(() => Int, { nullable: true, description: 'Images only, in pixels.' })
  width!: number | null;

  @Field(() => Int, { nullable: true, description: 'Images only, in pixels.' })
  height!: number | null;

  @Field()
  created_at!: Date;

  /** Filled by a field resolver: signing needs the request's services. */
  storage_key?: string;
}

@ObjectType('FilePage', { simpleResolvers: true })
export class FilePageType extends PageOf(FileInfoType) {}

export function toUploadedFile(file: StoredFile): UploadedFileType {
  return { user_id: file.user.id, client_id: file.id, name: file.name, mime: file.mime };
}

export function toFileInfo(file: StoredFile): FileInfoType {
  return {
    ...toUploadedFile(file),
    kind: file.kind,
    size_bytes: file.sizeBytes,
    sha256: file.sha256,
    page_count: file.pageCount ?? null,
    width: file.widthPx ?? null,
    height: file.heightPx ?? null,
    created_at: file.createdAt,
    storage_key: file.storageKey,
  };
}
