/**
 * The bridge's configuration: command-line flags, each also readable from an ESIGN_BRIDGE_* environment variable.
 * A flag given on the command line replaces the environment's value for that setting.
 */
import path from 'node:path';

export const DEFAULT_PORT = 17365;

export interface BridgeConfig {
  /** PKCS#11 libraries to load, in order. */
  modules: string[];
  /** Origins (scheme://host[:port]) of the service allowed to use the bridge. */
  origins: string[];
  /** 0 asks the system for any free port. */
  port: number;
}

export type ParsedArgs = { kind: 'run'; config: BridgeConfig } | { kind: 'help' } | { kind: 'version' };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const USAGE = `Usage: esign-dsc-bridge --module <pkcs11-library> --origin <service-origin> [--port <n>]

  --module <path>  PKCS#11 library of the token (repeatable; at least one)
  --origin <url>   origin of the signing service, e.g. https://esign.example.com
                   (repeatable; at least one; scheme://host[:port], no path)
  --port <n>       port on 127.0.0.1 (default ${DEFAULT_PORT}; 0 = any free port)
  --help, --version

Each option can also come from the environment: ESIGN_BRIDGE_MODULE (several separated by "${path.delimiter}"),
ESIGN_BRIDGE_ORIGIN (several separated by ","), ESIGN_BRIDGE_PORT. Options on the command line win.
The bridge listens on 127.0.0.1 only; there is no option to change that.`;

const REPEATABLE = new Set(['module', 'origin']);
const SINGLE = new Set(['port']);

/** Reads argv (without the node and script entries) and the environment. Throws ConfigError on bad input. */
export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedArgs {
  const flags = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return { kind: 'help' };
    if (arg === '--version') return { kind: 'version' };
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!match) throw new ConfigError(`unexpected argument "${arg}"`);
    const name = match[1]!;
    // Listening anywhere but loopback would expose the token to the network: refuse outright.
    if (name === 'host' || name === 'listen' || name === 'bind') {
      throw new ConfigError(`--${name} is not supported: the bridge listens on 127.0.0.1 only`);
    }
    if (!REPEATABLE.has(name) && !SINGLE.has(name)) throw new ConfigError(`unknown option --${name}`);
    let value = match[2];
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined || value.startsWith('--')) throw new ConfigError(`--${name} needs a value`);
    }
    const values = flags.get(name) ?? [];
    if (SINGLE.has(name) && values.length > 0) throw new ConfigError(`--${name} given twice`);
    values.push(value);
    flags.set(name, values);
  }
  if (env.ESIGN_BRIDGE_HOST !== undefined) {
    throw new ConfigError('ESIGN_BRIDGE_HOST is not supported: the bridge listens on 127.0.0.1 only');
  }
  const modules = flags.get('module') ?? splitList(env.ESIGN_BRIDGE_MODULE, path.delimiter);
  const origins = (flags.get('origin') ?? splitList(env.ESIGN_BRIDGE_ORIGIN, ',')).map(checkOrigin);
  const portText = flags.get('port')?.[0] ?? env.ESIGN_BRIDGE_PORT;
  if (modules.length === 0) throw new ConfigError('give at least one --module (a PKCS#11 library)');
  if (origins.length === 0)
    throw new ConfigError('give at least one --origin (the signing service, e.g. https://esign.example.com)');
  return { kind: 'run', config: { modules, origins: [...new Set(origins)], port: parsePort(portText) } };
}

function splitList(value: string | undefined, separator: string): string[] {
  if (!value) return [];
  return value
    .split(separator)
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/** An origin exactly as browsers send it in the Origin header, so that comparing strings is enough. */
function checkOrigin(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`--origin "${text}" is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`--origin "${text}" must start with https:// or http://`);
  }
  if (url.origin !== text) {
    throw new ConfigError(
      `--origin "${text}" must be exactly scheme://host[:port] with no path, user or default port (did you mean "${url.origin}"?)`,
    );
  }
  return text;
}

function parsePort(text: string | undefined): number {
  if (text === undefined || text === '') return DEFAULT_PORT;
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new ConfigError(`--port "${text}" is not a port number (0-65535)`);
  return Number(text);
}
