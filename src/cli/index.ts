/**
 * `npm run cli -- <command>`: user, token and wallet administration against the configured database
 * (DATABASE_URL, or the embedded one under DATA_DIR, reused when a server is running on it).
 * Each command prints one JSON document on stdout; logs go to stderr.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config';
import { parseRupees } from '../platform/money';
import { AppError } from '../platform/errors';
import type { TokenScope } from '../modules/users';
import type { Orm } from '../platform/db/orm';

const USAGE = `usage: npm run cli -- <command>
  users create --email EMAIL                        create a user and its first access token
  tokens create --user USER_ID [--expires-in SECONDS] [--label TEXT] [--scope user|admin]
                                                    issue another access token; --scope admin also opens
                                                    the admin operations on every user's account
  tokens revoke TOKEN_ID                            revoke a token (it answers 401 from then on)
  wallet credit --user USER_ID --amount RUPEES      add money to a user's wallet (e.g. 2500 or 99.50)`;

class UsageError extends Error {}

type Args = { values: Record<string, string | undefined>; positionals: string[] };
/**
 * A command checks its arguments (throwing UsageError) and answers what to run once the database is open: a mistyped
 * call is answered at once, without loading the whole service or opening a connection.
 */
type Command = (args: Args) => Promise<(orm: Orm) => Promise<unknown>>;

function required(values: Record<string, string | undefined>, name: string): string {
  const value = values[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

const commands: Record<string, Command> = {
  'users create': async ({ values }) => {
    const email = required(values, 'email');
    const { createUser } = await import('../modules/users/index.js');
    return (orm) => createUser(orm.em.fork(), { email });
  },
  'tokens create': async ({ values }) => {
    const { issueAccessToken, CLI_TOKEN_KINDS } = await import('../modules/users/index.js');
    const expires = values['expires-in'];
    const seconds = expires === undefined ? undefined : Number(expires);
    if (seconds !== undefined && !(Number.isInteger(seconds) && seconds > 0)) {
      throw new UsageError('--expires-in must be a whole number of seconds greater than 0');
    }
    const scope = values.scope ?? 'user';
    if (!CLI_TOKEN_KINDS.includes(scope as TokenScope)) throw new UsageError(`--scope must be one of ${CLI_TOKEN_KINDS.join(', ')}`);
    const user = required(values, 'user');
    return (orm) =>
      issueAccessToken(orm.em.fork(), user, {
        expiresInSeconds: seconds,
        label: values.label,
        scope: scope as TokenScope,
      });
  },
  'tokens revoke': async ({ positionals }) => {
    const tokenId = positionals[2];
    if (!tokenId) throw new UsageError('tokens revoke needs a TOKEN_ID (tok_...)');
    const { revokeAccessToken } = await import('../modules/users/index.js');
    return (orm) => revokeAccessToken(orm.em.fork(), tokenId);
  },
  'wallet credit': async ({ values }) => {
    const paise = parseRupees(required(values, 'amount'));
    if (paise === null || paise <= 0n) throw new UsageError('--amount must be rupees greater than 0, at most 2 decimals');
    const user = required(values, 'user');
    const { creditWallet } = await import('../modules/wallet/index.js');
    return (orm) => creditWallet(orm.em.fork(), user, paise);
  },
};

async function main(argv: string[]): Promise<number> {
  const parsed = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      user: { type: 'string' },
      amount: { type: 'string' },
      label: { type: 'string' },
      scope: { type: 'string' },
      'expires-in': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const name = parsed.positionals.slice(0, 2).join(' ');
  const command = commands[name];
  if (parsed.values.help || !command) {
    process.stderr.write(`${USAGE}\n`);
    return parsed.values.help ? 0 : 64;
  }
  const run = await command({ values: parsed.values as Record<string, string | undefined>, positionals: parsed.positionals });
  const [{ default: pino }, { composition }, { openDatabase }, { openOrm }] = await Promise.all([
    import('pino'),
    import('../modules.js'),
    import('../platform/bootstrap.js'),
    import('../platform/db/orm.js'),
  ]);
  const config = loadConfig();
  const log = pino({ level: config.logLevel === 'info' ? 'warn' : config.logLevel }, pino.destination(2));
  const database = await openDatabase(config, log);
  const orm = await openOrm(database.url, { entities: composition.entities, poolMax: 2, log });
  try {
    process.stdout.write(`${JSON.stringify(await run(orm))}\n`);
    return 0;
  } finally {
    await orm.close();
    if (database.embedded?.owned) await database.embedded.stop();
  }
}

main(process.argv.slice(2))
  .then((code) => process.exit(code))
  .catch((error: unknown) => {
    if (error instanceof UsageError || error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n\n${USAGE}\n`);
      process.exit(64);
    }
    if (error instanceof AppError) {
      const details = error.errors?.map((e) => `${e.field}: ${e.problem}`).join('; ');
      process.stderr.write(
        `${error.code}: ${error.message !== error.code ? error.message : ''}${details ? ` ${details}` : ''}\n`,
      );
      process.exit(1);
    }
    // Every parseArgs refusal (unknown option, missing or ambiguous value such as `--amount -5`) is a usage error.
    if (String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_')) {
      process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
      process.exit(64);
    }
    console.error(error);
    process.exit(1);
  });
