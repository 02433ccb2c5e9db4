import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, restUpload } from '../helpers/clients';
import { createSession, sessionBody, signerInput } from '../helpers/factories';
import { heavyPdf } from '../helpers/heavy-pdf';
import { MINIMAL_PDF } from '../helpers/fixtures';
import { makePkcs12 } from '../helpers/pfx';

/** About 3 s of pdf-lib parsing on the development machine (8.4 MB). Before the pool, all of it on the event loop. */
const HEAVY = heavyPdf(100_000);

async function fileCount(app: TestApp, token: string): Promise<number> {
  const listed = await rest<{ items: unknown[] }>(app, 'GET', '/files/list', { token, query: { size: 100 } });
  return listed.body.data!.items.length;
}

/**
 * These tests are about where the work runs, not about its budget: on a loaded machine 3 s of parsing takes many
 * times that, so their apps get a budget no run reaches, and the tests a ceiling to match (the one test of the
 * budget sets its own).
 */
const NO_BUDGET = { WORKER_TASK_TIMEOUT_MS: String(10 * 60_000), WORKER_QUEUE_TIMEOUT_MS: String(10 * 60_000) };
const HEAVY_WORK = { timeout: 10 * 60_000 };

describe('work on uploaded bytes runs in the worker pool', () => {
  let app: TestApp;
  let owner: TestUser;
  beforeAll(async () => {
    app = await startTestApp({ env: { WORKER_THREADS: '1', ...NO_BUDGET } });
    owner = await app.createUser();
  });
  afterAll(() => app.close());

  it('the service answers other requests while a heavy PDF is parsed', HEAVY_WORK, async () => {
    const finished: string[] = [];
    const upload = restUpload<{ client_id: string }>(app, '/files/upload-pdf', owner.token, {
      bytes: HEAVY,
      filename: 'heavy.pdf',
    }).then((response) => {
      finished.push('upload');
      return response;
    });
    // Once the upload is being parsed, health checks and reads keep being answered before it ends.
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (let n = 0; n < 5; n++) {
      expect((await fetch(new URL('/healthz', app.url))).status).toBe(200);
      expect((await rest(app, 'GET', '/wallet', { token: owner.token })).status).toBe(200);
      finished.push('read');
    }
    const response = await upload;
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(finished.indexOf('upload')).toBeGreaterThan(finished.indexOf('read'));
    const details = await rest<{ page_count: number }>(app, 'GET', '/files/details', {
      token: owner.token,
      query: { client_id: response.body.data!.client_id },
    });
    expect(details.body.data!.page_count).toBe(1);
  });

  it(
    'signing and verifying a heavy document run in the pool: the service answers meanwhile, and the signature verifies',
    HEAVY_WORK,
    async () => {
      const heavy = heavyPdf(40_000);
      const uploaded = await restUpload<{ client_id: string }>(app, '/files/upload-pdf', owner.token, {
        bytes: heavy,
        filename: 'heavy.pdf',
      });
      expect(uploaded.status).toBe(200);
      const session = await createSession(
        app,
        owner.token,
        sessionBody(uploaded.body.data!.client_id, { signers: [signerInput()] }),
      );
      const signed = await fetch(new URL('/signer-api/sign', app.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${session.signers[0].token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ consent: true }),
      });
      expect(signed.status).toBe(200);

      const finished: string[] = [];
      const verify = rest<{ all_valid: boolean; signatures: unknown[] }>(app, 'GET', '/esign/verify', {
        token: owner.token,
        query: { client_id: session.client_id },
      }).then((response) => {
        finished.push('verify');
        return response;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await fetch(new URL('/healthz', app.url))).status).toBe(200);
      finished.push('health');
      const report = await verify;
      expect(report.status, JSON.stringify(report.body)).toBe(200);
      expect(report.body.data).toMatchObject({ all_valid: true });
      // The signature, then the completion's document time-stamp (PADES_LTV), also added in the pool.
      expect(report.body.data!.signatures).toMatchObject([
        { sub_filter: 'ETSI.CAdES.detached', pades_level: 'B-LTA' },
        { sub_filter: 'ETSI.RFC3161', pades_level: null, covers_whole_document: true },
      ]);
      expect(finished).toEqual(['health', 'verify']);
    },
  );

  it('a full queue refuses at once with 503 service_unavailable, and the pool works again afterwards', HEAVY_WORK, async () => {
    const busy = await startTestApp({ env: { WORKER_THREADS: '1', WORKER_QUEUE_MAX: '1', ...NO_BUDGET } });
    try {
      const user = await busy.createUser();
      const answers = await Promise.all(
        Array.from({ length: 4 }, (_, n) =>
          restUpload(busy, '/files/upload-pdf', user.token, { bytes: HEAVY, filename: `heavy-${n}.pdf` }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toContain(503);
      expect(statuses).toContain(200);
      for (const answer of answers.filter((a) => a.status === 503)) {
        expect(answer.body).toMatchObject({ message: 'service_unavailable', success: false, status_code: 503 });
      }
      expect(await fileCount(busy, user.token)).toBe(answers.filter((a) => a.status === 200).length);
      const after = await restUpload(busy, '/files/upload-pdf', user.token, { bytes: MINIMAL_PDF, filename: 'small.pdf' });
      expect(after.status).toBe(200);
    } finally {
      await busy.close();
    }
  });

  it(
    'a task over its time budget stops its thread: 422 unprocessable_content, nothing stored, the next upload works',
    HEAVY_WORK,
    async () => {
      // The budget counts from when a thread starts the task, so the small upload after it, on a new thread, has its
      // whole second however long that thread took to start on a loaded machine.
      const strict = await startTestApp({ env: { WORKER_TASK_TIMEOUT_MS: '1000' } });
      try {
        const user = await strict.createUser();
        const refused = await restUpload(strict, '/files/upload-pdf', user.token, { bytes: HEAVY, filename: 'heavy.pdf' });
        expect(refused.status).toBe(422);
        expect(refused.body).toMatchObject({
          message: 'unprocessable_content',
          errors: [{ field: 'file', problem: 'the document or image took longer than 1000 ms to process' }],
        });
        expect(await fileCount(strict, user.token)).toBe(0);
        const after = await restUpload(strict, '/files/upload-pdf', user.token, { bytes: MINIMAL_PDF, filename: 'small.pdf' });
        expect(after.status).toBe(200);
      } finally {
        await strict.close();
      }
    },
  );

  it('a PKCS#12 that asks for 100 million key-derivation rounds is stopped at the time budget, not run on the event loop', async () => {
    // The MAC's iteration count is the file's to choose, and node-forge derives in JavaScript.
    const pfx = forge.asn1.fromDer(forge.util.createBuffer(makePkcs12({ password: 'pw' }).toString('binary')));
    const macData = pfx.value[2] as forge.asn1.Asn1;
    (macData.value as forge.asn1.Asn1[])[2] = forge.asn1.create(
      forge.asn1.Class.UNIVERSAL,
      forge.asn1.Type.INTEGER,
      false,
      forge.asn1.integerToDer(100_000_000).getBytes(),
    );
    const bomb = Buffer.from(forge.asn1.toDer(pfx).getBytes(), 'binary');
    const strict = await startTestApp({ env: { WORKER_TASK_TIMEOUT_MS: '1500' } });
    try {
      const user = await strict.createUser();
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(bomb)]), 'bomb.p12');
      form.append('password', 'pw');
      const upload = fetch(new URL('/api/v1/pfx/upload', strict.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}` },
        body: form,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await fetch(new URL('/healthz', strict.url))).status).toBe(200);
      const refused = await upload;
      expect(refused.status).toBe(422);
      expect(await refused.json()).toMatchObject({ message: 'unprocessable_content' });
      const listed = await rest<unknown[]>(strict, 'GET', '/wallet', { token: user.token });
      expect(listed.status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});
