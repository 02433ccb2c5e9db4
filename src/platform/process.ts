import { ConfigError, describeConfig, loadConfig, type AppConfig } from '../config';
import { createLogger, routeConsoleToLogger, type Logger } from './logger';

/** The configuration, or exit 2 with a message naming every bad variable. */
export function configOrExit(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}

export function startLogging(config: AppConfig, what: string): Logger {
  const log = createLogger(config.logLevel);
  routeConsoleToLogger(log);
  log.info({ config: describeConfig(config) }, `starting ${what}`);
  return log;
}

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits 0 (1 if stopping failed). A stop that hangs is cut
 * short after `limitMs`.
 */
export function onShutdown(log: Logger, limitMs: number, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight work');
    setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, limitMs).unref();
    try {
      await stop();
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

export function exitOnStartFailure(error: unknown): never {
  console.error('failed to start:', error);
  process.exit(1);
}
