import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { rest } from '../helpers/clients';
import { FOUR_PAGE_PDF, uploadPdf } from '../helpers/factories';

/** The S3 blob store against a real S3-compatible server (s3rver, in process), not a stub of the SDK. */
describe('blob storage on S3-compatible object storage', () => {
  let s3: S3rver;
  let dir: string;
  let app: TestApp;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'esign-s3-'));
    s3 = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: dir,
      configureBuckets: [{ name: 'esign-blobs', configs: [] }],
    });
    const { port } = await s3.run();
    app = await startTestApp({
      env: {
        STORAGE_DRIVER: 's3',
        S3_BUCKET: 'esign-blobs',
        S3_ENDPOINT: `http://127.0.0.1:${port}`,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
        S3_FORCE_PATH_STYLE: 'true',
      },
    });
  });
  afterAll(async () => {
    await app.close();
    await s3.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores uploads in the bucket and serves them back through signed links', async () => {
    const user = await app.createUser();
    // Over 5 MB: the SDK's multipart upload path, not only a single PUT.
    const large = Buffer.concat([FOUR_PAGE_PDF, Buffer.from(`\n%${' '.repeat(6 * 1024 * 1024)}\n`)]);
    for (const bytes of [FOUR_PAGE_PDF, large]) {
      const fileId = await uploadPdf(app, user.token, bytes);
      const details = await rest<any>(app, 'GET', '/files/details', { token: user.token, query: { client_id: fileId } });
      const downloaded = Buffer.from(await (await fetch(details.body.data.download_url)).arrayBuffer());
      expect(downloaded.equals(bytes)).toBe(true);
    }
    const stored = await readdir(path.join(dir, 'esign-blobs'), { recursive: true });
    expect(stored.some((name) => name.includes('file_'))).toBe(true);
    const ready = await fetch(new URL('/readyz', app.url));
    expect(await ready.json()).toMatchObject({ checks: { storage: 'ok' } });
  });

  it('reports storage as failing when the bucket is unreachable', async () => {
    await s3.close();
    try {
      const ready = await fetch(new URL('/readyz', app.url));
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ checks: { storage: 'failing' } });
    } finally {
      await s3.run();
    }
  });
});
