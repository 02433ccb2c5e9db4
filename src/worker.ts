import 'reflect-metadata';
import { ConfigError, describeConfig, loadConfig } from './config';
import { jobDefinitions } from './jobs';
import { openDatabase, startServices } from './platform/bootstrap';
import { createLogger } from './platform/logger';

/** `npm run worker`: queue workers only, against the same database as the API processes. */
async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const log = createLogger(config.logLevel);
  log.info({ config: describeConfig(config) }, 'starting worker');
  const database = await openDatabase(config, log);
  const services = await startServices(config, log, database, jobDefinitions, { workers: true });
  log.info({ queues: jobDefinitions.map((job) => job.name) }, 'worker running');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'worker shutting down: letting running jobs finish');
    try {
      await services.stop();
      if (database.embedded?.owned) await database.embedded.stop();
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error) => {
  console.error('failed to start:', error);
  process.exit(1);
});
