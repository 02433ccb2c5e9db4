import 'reflect-metadata';
import { createHttpApp } from './app';
import { composition } from './modules';
import { openDatabase, startServices } from './platform/bootstrap';
import { ensureDevUser } from './modules/users';
import { configOrExit, exitOnStartFailure, onShutdown, startLogging } from './platform/process';

/** Process entry: config -> database -> queue -> HTTP server; SIGTERM/SIGINT shut down in reverse. */
async function main() {
  const config = configOrExit();
  const log = startLogging(config, 'API');

  const database = await openDatabase(config, log);
  const services = await startServices(config, log, database, composition);
  const http = await createHttpApp(services, composition);

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
  if (config.env === 'production') {
    // Not refused (an integrator may deliver invites itself from the outbox), but nobody gets mail or SMS.
    const outboxOnly = [
      !config.notifications.smtpUrl && 'email (SMTP_URL)',
      !config.notifications.sms && 'SMS (SMS_HTTP_URL)',
      !config.notifications.whatsapp && 'WhatsApp (WHATSAPP_HTTP_URL)',
    ].filter(Boolean);
    if (outboxOnly.length > 0)
      log.warn({ channels: outboxOnly }, 'no provider for these channels: their messages stay in the outbox');
    if (!config.publicUrl.startsWith('https://'))
      log.warn('PUBLIC_URL is not https: browsers refuse camera and location to the signing page');
    if (process.env.NODE_ENV !== 'production')
      log.warn('NODE_ENV is not production: graphql-js keeps its development checks, which slow every field');
  }

  onShutdown(log, config.shutdownTimeoutMs + 15_000, async () => {
    await http.close(config.shutdownTimeoutMs);
    log.info('HTTP server closed');
    await services.stop();
    log.info('queue and database pool closed');
    if (database.embedded?.owned) await database.embedded.stop();
  });
}

main().catch(exitOnStartFailure);
