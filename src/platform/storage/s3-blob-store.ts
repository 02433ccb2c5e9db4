import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  NotFound,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { AppConfig } from '../../config';
import { assertSafeKey, type BlobStore } from './blob-store';

/** The S3 settings as the configuration reads them (STORAGE_DRIVER=s3 and its S3_* variables). */
export type S3Options = Omit<Extract<AppConfig['storage'], { driver: 's3' }>, 'driver'>;

/** Any S3-compatible object store (AWS S3, MinIO, Ceph, R2...). Large files go up as multipart uploads. */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;

  constructor(private readonly options: S3Options) {
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials:
        options.accessKeyId && options.secretAccessKey
          ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
          : undefined,
    });
  }

  async putFile(key: string, sourcePath: string, contentType: string): Promise<void> {
    assertSafeKey(key);
    await new Upload({
      client: this.client,
      params: { Bucket: this.options.bucket, Key: key, Body: createReadStream(sourcePath), ContentType: contentType },
    }).done();
  }

  async putBytes(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    assertSafeKey(key);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.options.bucket, Key: key, Body: bytes, ContentType: contentType }),
    );
  }

  async getStream(key: string): Promise<Readable> {
    assertSafeKey(key);
    const result = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
    return result.Body as Readable;
  }

  async getBytes(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.getStream(key)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async stat(key: string): Promise<{ size: number } | null> {
    assertSafeKey(key);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return { size: head.ContentLength ?? 0 };
    } catch (error) {
      if (error instanceof NotFound || error instanceof NoSuchKey) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertSafeKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }));
  }
}
