import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createSession, sessionBody, uploadPdf } from '../helpers/factories';
import { ROOT } from '../helpers/process';

describe('npm run worker', () => {
  let app: TestApp;
  let dataDir: string;

  beforeAll(async () => {
    // The API process runs no workers here: only the separate worker can move the queue.
    app = await startTestApp({ env: { RUN_WORKERS: 'false' } });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'esign-worker-'));
  });
  afterAll(async () => {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs the jobs the API process queued, and stops cleanly on SIGTERM', async () => {
    const user = await app.createUser();
    const session = await createSession(app, user.token, sessionBody(await uploadPdf(app, user.token)));
    const sql = (query: string, params: unknown[] = []) => app.services.orm.em.fork().getConnection().execute(query, params);
    await sql(`update esign_sessions set expires_at = now() - interval '1 second' where id = ?`, [session.client_id]);
    await app.services.boss.send('esign.expire', { client_id: session.client_id });
    const status = async () => (await sql('select status from esign_sessions where id = ?', [session.client_id]))[0].status;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await status()).toBe('pending');

    const worker = spawn(process.execPath, [path.join(ROOT, 'dist/src/worker.js')], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: app.databaseUrl,
        DATA_DIR: dataDir,
        QUEUE_POLL_INTERVAL_SECONDS: '0.5',
        LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => worker.on('exit', resolve));
    try {
      const deadline = Date.now() + 30_000;
      while ((await status()) !== 'expired') {
        if (Date.now() > deadline) throw new Error('the worker did not run the expiry job');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      worker.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
