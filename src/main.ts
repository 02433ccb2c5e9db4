import 'reflect-metadata';
import { createHttpApp } from './app';
import { jobDefinitions } from './jobs';
import { ConfigError, describeConfig, loadConfig } from './config';
import { openDatabase, startServices } from './platform/bootstrap';
import { ensureDevUser } from './platform/dev-user';
import { createLogger } from './platform/logger';

/** Process entry: config -> database -> queue -> HTTP server; SIGTERM/SIGINT shut down in reverse. */
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
  log.info({ config: describeConfig(config) }, 'starting');

  const database = await openDatabase(config, log);
  const services = await startServices(config, log, database, jobDefinitions);
  const http = await createHttpApp(services);

  if (config.env === 'sandbox') {
    const dev = await ensureDevUser(services.orm.em.fork());
    if (dev) {
      // Printed once, on the console only: the token is not kept anywhere in clear.
      process.stdout.write(
        `\nSandbox development user created.\n  user_id: ${dev.user_id}\n  token:   ${dev.token}\n` +
          `Use it as "Authorization: Bearer <token>". It is shown only this once.\n\n`,
      );
    }
  }

  await new Promise<void>((resolve, reject) => {
    http.server.once('error', reject);
    http.server.listen(config.port, config.host, () => resolve());
  });
  const address = http.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info({ port, public_url: config.publicUrl }, 'listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    const forced = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 15_000);
    forced.unref();
    try {
      await http.close(config.shutdownTimeoutMs);
      log.info('HTTP server closed');
      await services.stop();
      log.info('queue and database pool closed');
      if (database.embedded?.owned) await database.embedded.stop();
      log.info('stopped');
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
