import type express from 'express';
import type { AppServices } from '../services';

/** `/healthz` answers while the process does; `/readyz` also asks the database, the queue and the storage. */
export function mountHealth(app: express.Express, services: AppServices): void {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks = await readiness(services);
    const ready = Object.values(checks).every((state) => state === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });
}

async function readiness(services: AppServices): Promise<Record<string, string>> {
  const check = async (probe: () => Promise<unknown>) => {
    try {
      await Promise.race([probe(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref())]);
      return 'ok';
    } catch {
      return 'failing';
    }
  };
  const [database, queue, storage] = await Promise.all([
    check(() => services.orm.em.getConnection().execute('select 1')),
    check(() => services.boss.getQueues()),
    check(() => services.blobs.check()),
  ]);
  return { database, queue, storage };
}
