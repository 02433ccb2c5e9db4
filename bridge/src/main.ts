#!/usr/bin/env node
/**
 * esign-dsc-bridge: lets the service's signing page use a DSC USB token on this computer, through PKCS#11, while the
 * PIN stays on the bridge's own page. Prints one line "esign-dsc-bridge listening on http://127.0.0.1:<port>" on
 * stdout when ready (a parent process reads the port from it); everything else goes to stderr.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { ConfigError, USAGE, parseArgs } from './config.ts';
import { SignRequests } from './requests.ts';
import { createBridgeServer } from './server.ts';
import { Tokens } from './tokens.ts';

const HOST = '127.0.0.1';

function readVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

function main(): void {
  let parsed;
  try {
    parsed = parseArgs(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`esign-dsc-bridge: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (parsed.kind === 'help') return void console.log(USAGE);
  const version = readVersion();
  if (parsed.kind === 'version') return void console.log(version);
  const { config } = parsed;

  const tokens = new Tokens(config.modules);
  for (const module of tokens.moduleStatus()) {
    if (!module.loaded) console.error(`esign-dsc-bridge: ${module.path}: ${module.error} (tried again at each request)`);
  }
  const requests = new SignRequests();
  const server = createBridgeServer({ origins: config.origins, tokens, requests, version });
  server.on('error', (error: NodeJS.ErrnoException) => {
    const hint = error.code === 'EADDRINUSE' ? ` (port ${config.port} is taken: is another bridge running?)` : '';
    console.error(`esign-dsc-bridge: cannot listen on ${HOST}:${config.port}: ${error.message}${hint}`);
    tokens.close();
    process.exit(1);
  });
  // Loopback only: nothing else on the network may reach the token. approve_url names 127.0.0.1, never localhost,
  // because browsers may try ::1 for localhost, where nothing listens.
  server.listen({ host: HOST, port: config.port }, () => {
    const { port } = server.address() as AddressInfo;
    console.log(`esign-dsc-bridge listening on http://${HOST}:${port}`);
    console.error(`esign-dsc-bridge ${version}: allowed origins ${config.origins.join(', ')}`);
  });

  const stop = () => {
    requests.close();
    server.close();
    server.closeAllConnections();
    tokens.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main();
