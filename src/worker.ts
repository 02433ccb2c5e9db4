import 'reflect-metadata';
import { composition } from './modules';
import { openDatabase, startServices } from './platform/bootstrap';
import { configOrExit, exitOnStartFailure, onShutdown, startLogging } from './platform/process';

/** `npm run worker`: queue workers only, against the same database as the API processes. */
async function main() {
  const config = configOrExit();
  const log = startLogging(config, 'worker');
  const database = await openDatabase(config, log);
  const services = await startServices(config, log, database, composition, { workers: true });
  log.info({ queues: composition.jobs.map((job) => job.name) }, 'worker running');
  onShutdown(log, config.shutdownTimeoutMs + 15_000, async () => {
    await services.stop();
    if (database.embedded?.owned) await database.embedded.stop();
  });
}

main().catch(exitOnStartFailure);
