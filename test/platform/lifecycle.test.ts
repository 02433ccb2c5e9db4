import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appPort as freePort, createTestDatabase } from '../helpers/app';
import { MINIMAL_PDF, corpusFile } from '../helpers/fixtures';
import { startServiceProcess, type ServiceProcess } from '../helpers/process';
import { until } from '../helpers/until';

async function me(port: number, token: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ me { user_id email } }' }),
  });
  return { status: response.status, body: await response.json() };
}

function postmasterPid(dataDir: string): number | null {
  const file = path.join(dataDir, 'pg', 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Each start here initialises or recovers a PostgreSQL cluster: on a loaded machine that alone can pass a minute.
describe('npm start with no configuration (embedded PostgreSQL under DATA_DIR)', { timeout: 300_000 }, () => {
  let dataDir: string;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'esign-start-'));
    await chmod(dataDir, 0o755);
  });
  afterAll(async () => {
    service?.child.kill('SIGKILL');
    const pid = postmasterPid(dataDir);
    if (pid && alive(pid)) process.kill(pid, 'SIGINT');
    await until(() => !pid || !alive(pid), 'the embedded postgres to stop').catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts its own database, creates a development user once, and stops it all on SIGTERM', async () => {
    const port = await freePort();
    service = startServiceProcess({ PORT: String(port), DATA_DIR: dataDir });
    await service.waitForLine(/"msg":"listening"/, 240_000);
    const banner = service.stdout.join('\n');
    expect(banner).toContain('Sandbox development user created.');
    const token = /token:\s+(esk_[A-Za-z0-9_-]+)/.exec(banner)![1];
    // The token is printed on the console banner, never inside a log line.
    expect(service.stdout.filter((line) => line.startsWith('{')).join('\n')).not.toContain(token);
    expect((await me(port, token)).body.data.me.email).toBe('dev@sandbox.local');

    // pdf-lib warns on the console while it parses this damaged file (refused as invalid_pdf); the warning
    // reaches stdout as a JSON log line.
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(corpusFile('017-unreadable-meta-data/unreadablemetadata.pdf'))]), 'odd.pdf');
    const upload = await fetch(`http://127.0.0.1:${port}/api/v1/files/upload-pdf`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(upload.status).toBe(400);
    const warning = await service.waitForLine(/Trying to parse invalid object/);
    expect(JSON.parse(warning)).toMatchObject({ level: 40, source: 'console', service: 'esign-estamp' });
    const bannerLines = new Set([
      '',
      'Sandbox development user created.',
      'Use it as "Authorization: Bearer <token>". It is shown only this once.',
    ]);
    const plain = service.stdout.filter(
      (line) => !line.startsWith('{') && !bannerLines.has(line) && !/^ {2}(user_id|token):/.test(line),
    );
    expect(plain).toEqual([]);
    for (const line of service.stdout.filter((line) => line.startsWith('{'))) expect(() => JSON.parse(line)).not.toThrow();

    const pid = postmasterPid(dataDir)!;
    expect(alive(pid)).toBe(true);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    await until(() => !alive(pid), 'the embedded postgres to stop');

    // A second start reuses the data: no new development user, the old token still works.
    service = startServiceProcess({ PORT: String(port), DATA_DIR: dataDir });
    await service.waitForLine(/"msg":"listening"/, 240_000);
    expect(service.stdout.join('\n')).not.toContain('Sandbox development user created.');
    expect((await me(port, token)).status).toBe(200);

    // Killed without a chance to clean up, it leaves postgres running; the next start uses that cluster.
    service.child.kill('SIGKILL');
    await service.exited;
    const orphan = postmasterPid(dataDir)!;
    expect(alive(orphan)).toBe(true);
    service = startServiceProcess({ PORT: String(port), DATA_DIR: dataDir });
    await service.waitForLine(/"msg":"listening"/, 240_000);
    expect(service.stdout.join('\n')).toContain('already running on this data directory');
    expect((await me(port, token)).status).toBe(200);
    service.child.kill('SIGKILL');
    await service.exited;

    // And when that postgres died too, the stale postmaster.pid is removed and a fresh one starts.
    process.kill(orphan, 'SIGKILL');
    await until(() => !alive(orphan), 'the orphan postgres to die');
    expect(postmasterPid(dataDir)).toBe(orphan);
    service = startServiceProcess({ PORT: String(port), DATA_DIR: dataDir });
    await service.waitForLine(/"msg":"listening"/, 240_000);
    expect(service.stdout.join('\n')).toContain('removing a stale postmaster.pid');
    expect((await me(port, token)).status).toBe(200);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});

describe('graceful shutdown', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'esign-graceful-'));
  });
  afterAll(async () => {
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('finishes an upload that is in flight when SIGTERM arrives, and takes no new connection', async () => {
    const port = await freePort();
    const service = startServiceProcess({ PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: database.url });
    try {
      await service.waitForLine(/"msg":"listening"/);
      const token = /token:\s+(esk_[A-Za-z0-9_-]+)/.exec(service.stdout.join('\n'))![1];

      const boundary = 'graceful-boundary';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="late.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const body = Buffer.concat([head, MINIMAL_PDF, tail]);
      const half = Math.floor(body.length / 2);
      const response = new Promise<{ status: number; body: any }>((resolve, reject) => {
        const request = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/v1/files/upload-pdf',
            headers: {
              authorization: `Bearer ${token}`,
              'content-type': `multipart/form-data; boundary=${boundary}`,
              'content-length': String(body.length),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
          },
        );
        request.on('error', reject);
        request.write(body.subarray(0, half));
        // The rest is sent only once the server has been told to stop.
        void service.waitForLine(/shutting down/).then(() =>
          setTimeout(() => {
            request.end(body.subarray(half));
          }, 300),
        );
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      service.child.kill('SIGTERM');
      await service.waitForLine(/shutting down/);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();

      const answer = await response;
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ status_code: 200, message: 'Success', success: true });
      expect(answer.body.data.client_id).toMatch(/^file_/);
      expect(await service.exited).toBe(0);
    } finally {
      service.child.kill('SIGKILL');
    }
  });
});

describe('configuration errors', () => {
  it('stop the process with a message naming each bad variable', async () => {
    const bad = startServiceProcess({ PORT: 'eighty', LOG_LEVEL: 'loud' });
    expect(await bad.exited).toBe(2);
    const message = bad.stderr.join('\n');
    expect(message).toContain('PORT');
    expect(message).toContain('LOG_LEVEL');

    const production = startServiceProcess({ APP_ENV: 'production' });
    expect(await production.exited).toBe(2);
    const refused = production.stderr.join('\n');
    for (const variable of [
      'URL_SIGNING_SECRET',
      'SECRETS_ENCRYPTION_KEY',
      'DATABASE_URL',
      'PUBLIC_URL',
      'PLATFORM_SIGNING_PFX',
      'ALLOW_SANDBOX_ESP',
      'STAMP_VENDOR',
    ]) {
      expect(refused).toContain(variable);
    }
  });
});
