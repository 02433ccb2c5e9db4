import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeDocument } from '../__generated__/graphql';
import { createTestDatabase, startTestApp, type TestApp } from '../helpers/app';
import { gql, rest } from '../helpers/clients';

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'dist/src/cli/index.js');
const EX_USAGE = 64;

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the compiled CLI as an operator would, against the given database. */
function runCli(args: string[], databaseUrl: string): Promise<CliRun> {
  return run(process.execPath, [CLI, ...args], { cwd: ROOT, env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' } });
}

function run(command: string, args: string[], { cwd, env = {} }: { cwd: string; env?: Record<string, string> }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The one JSON document a successful command prints: exactly one line on stdout. */
function jsonLine<T = Record<string, string>>(run: CliRun): T {
  expect(run.code, run.stderr).toBe(0);
  const lines = run.stdout.split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe('');
  return JSON.parse(lines[0]) as T;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Each run is a process that loads the service's modules and opens the database before it answers (a refused
 * argument too), a few seconds on a loaded machine. So a test's ceiling is sized to the processes it starts, and
 * runs that do not depend on each other start together instead of one after the other.
 */
describe('the CLI', { timeout: 300_000 }, () => {
  let app: TestApp;
  let db: pg.Client;
  const cli = (...args: string[]) => runCli(args, app.databaseUrl);
  const count = async (sql: string, params: unknown[] = []) => Number((await db.query<{ n: string }>(sql, params)).rows[0].n);

  beforeAll(async () => {
    // `npm test` builds first; a lone run of this file builds only when nothing is there.
    if (!existsSync(CLI))
      execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: ROOT });
    app = await startTestApp();
    db = new pg.Client({ connectionString: app.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await app?.close();
  });

  async function newUser(email: string): Promise<{ user_id: string; token: string; token_id: string }> {
    return jsonLine(await cli('users', 'create', '--email', email));
  }

  describe('users create', () => {
    it('migrates an empty database and creates a user there', async () => {
      const database = await createTestDatabase();
      try {
        const created = jsonLine(await runCli(['users', 'create', '--email', 'first@example.com'], database.url));
        expect(created.user_id).toMatch(/^user_/);
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          const { rows } = await client.query('select id, email from users');
          expect(rows).toEqual([{ id: created.user_id, email: 'first@example.com' }]);
        } finally {
          await client.end();
        }
      } finally {
        await database.drop();
      }
    });

    it('prints the user and its first token, which works against the app', async () => {
      const run = await cli('users', 'create', '--email', 'ops@example.com');
      const created = jsonLine(run);
      expect(Object.keys(created).sort()).toEqual(['token', 'token_id', 'user_id']);
      expect(created.user_id).toMatch(/^user_[A-Za-z0-9]+$/);
      expect(created.token).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
      expect(created.token_id).toMatch(/^tok_[A-Za-z0-9]+$/);
      // Logs go to stderr, and never carry the token.
      expect(run.stderr).not.toContain(created.token);

      const list = await rest(app, 'GET', '/files/list', { token: created.token, query: { page: 1, size: 1 } });
      expect(list.status).toBe(200);
      expect(list.body).toEqual({
        data: { items: [], has_next: false },
        status_code: 200,
        message: expect.any(String),
        success: true,
      });
      const me = await gql(app, created.token, MeDocument);
      expect(me.data?.me).toEqual({ user_id: created.user_id, email: 'ops@example.com', token_id: created.token_id });
    });

    it('refuses an email that exists already (whatever its case) with exit 1 and nothing on stdout', async () => {
      jsonLine(await cli('users', 'create', '--email', 'twice@example.com'));
      const users = await count('select count(*) as n from users');
      for (const email of ['twice@example.com', 'TWICE@Example.com']) {
        const again = await cli('users', 'create', '--email', email);
        expect(again.code).toBe(1);
        expect(again.stdout).toBe('');
        expect(again.stderr).toMatch(/conflict/);
      }
      expect(await count('select count(*) as n from users')).toBe(users);
    });

    it(
      'creates one user when the same email is created concurrently; the others get conflict',
      { timeout: 120_000 },
      async () => {
        const runs = await Promise.all(Array.from({ length: 5 }, () => cli('users', 'create', '--email', 'race@example.com')));
        const won = runs.filter((run) => run.code === 0);
        expect(won).toHaveLength(1);
        expect(jsonLine(won[0]).user_id).toMatch(/^user_/);
        for (const lost of runs.filter((run) => run.code !== 0)) {
          expect(lost.code, lost.stderr).toBe(1);
          expect(lost.stdout).toBe('');
          expect(lost.stderr).toMatch(/^conflict/);
        }
        expect(await count('select count(*) as n from users where email = $1', ['race@example.com'])).toBe(1);
      },
    );

    it('refuses an invalid email with exit 1', async () => {
      const users = await count('select count(*) as n from users');
      const emails = ['not-an-email', 'a@', '@example.com', ' '];
      const runs = await Promise.all(emails.map((email) => cli('users', 'create', '--email', email)));
      for (const [i, run] of runs.entries()) {
        expect(run.code, `${emails[i]}: ${run.stderr}`).toBe(1);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/bad_request|email/);
      }
      expect(await count('select count(*) as n from users')).toBe(users);
    });

    it('treats a missing --email as a usage error', async () => {
      for (const args of [
        ['users', 'create'],
        ['users', 'create', '--email'],
      ]) {
        const run = await cli(...args);
        expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(EX_USAGE);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/usage/);
      }
    });
  });

  describe('tokens', () => {
    it('creates an expiring token that works until it expires', async () => {
      const user = await newUser('expiring@example.com');
      // Long enough that the CLI's exit and the first request fit before it, however loaded the machine; the test
      // then waits for the expiry itself.
      const issued = jsonLine(await cli('tokens', 'create', '--user', user.user_id, '--expires-in', '20'));
      expect(Object.keys(issued).sort()).toEqual(['expires_at', 'scope', 'token', 'token_id']);
      expect(issued.scope).toBe('user');
      expect(issued.token).toMatch(/^esk_/);
      expect(issued.token_id).toMatch(/^tok_/);
      expect(new Date(issued.expires_at).toISOString()).toBe(issued.expires_at);
      const stored = await db.query<{ expires_at: Date; user_id: string }>(
        'select expires_at, user_id from access_tokens where id = $1',
        [issued.token_id],
      );
      expect(stored.rows[0]).toEqual({ expires_at: new Date(issued.expires_at), user_id: user.user_id });

      const before = await rest(app, 'GET', '/files/list', { token: issued.token, query: { page: 1, size: 1 } });
      expect(before.status).toBe(200);

      await sleep(Math.max(0, Date.parse(issued.expires_at) - Date.now()) + 500);
      const after = await rest(app, 'GET', '/files/list', { token: issued.token, query: { page: 1, size: 1 } });
      expect(after.status).toBe(401);
      expect(after.body).toEqual({ data: null, status_code: 401, message: 'unauthorized', success: false });
      // The user's first token is not affected.
      expect((await rest(app, 'GET', '/files/list', { token: user.token, query: { page: 1, size: 1 } })).status).toBe(200);
    });

    it('creates a token without expiry and with a label', async () => {
      const user = await newUser('labelled@example.com');
      const issued = jsonLine<{ token_id: string; token: string; expires_at: string | null }>(
        await cli('tokens', 'create', '--user', user.user_id, '--label', 'ci pipeline'),
      );
      expect(issued.expires_at).toBeNull();
      const stored = await db.query('select label, expires_at from access_tokens where id = $1', [issued.token_id]);
      expect(stored.rows).toEqual([{ label: 'ci pipeline', expires_at: null }]);
      expect((await gql(app, issued.token, MeDocument)).data?.me?.token_id).toBe(issued.token_id);
    });

    it('creates an admin-scope token: it opens the admin operations, where the user scope gets 403 forbidden', async () => {
      const operator = await newUser('operator@example.com');
      const customer = await newUser('customer@example.com');
      const issued = jsonLine(await cli('tokens', 'create', '--user', operator.user_id, '--scope', 'admin', '--label', 'ops'));
      expect(issued.scope).toBe('admin');
      const stored = await db.query('select scope, label, user_id from access_tokens where id = $1', [issued.token_id]);
      expect(stored.rows).toEqual([{ scope: 'admin', label: 'ops', user_id: operator.user_id }]);

      const details = { query: { user_id: customer.user_id } };
      const asAdmin = await rest(app, 'GET', '/admin/users/details', { token: issued.token, ...details });
      expect(asAdmin.status, JSON.stringify(asAdmin.body)).toBe(200);
      expect(asAdmin.body.data).toMatchObject({ user_id: customer.user_id, email: 'customer@example.com', custom: false });
      // The same user's first token (scope user) is refused; so is an explicit --scope user.
      const plain = jsonLine(await cli('tokens', 'create', '--user', operator.user_id, '--scope', 'user'));
      expect(plain.scope).toBe('user');
      for (const token of [operator.token, plain.token]) {
        const refused = await rest(app, 'GET', '/admin/users/details', { token, ...details });
        expect(refused.status).toBe(403);
        expect(refused.body).toEqual({ data: null, status_code: 403, message: 'forbidden', success: false });
      }
    });

    it('treats an unknown --scope as a usage error', async () => {
      const user = await newUser('badscope@example.com');
      const tokens = await count('select count(*) as n from access_tokens');
      const scopes = ['root', 'ADMIN', ''];
      const runs = await Promise.all(scopes.map((scope) => cli('tokens', 'create', '--user', user.user_id, '--scope', scope)));
      for (const [i, run] of runs.entries()) {
        expect(run.code, `${scopes[i]}: ${run.stderr}`).toBe(EX_USAGE);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/--scope must be one of user, admin/);
      }
      expect(await count('select count(*) as n from access_tokens')).toBe(tokens);
    });

    it('refuses an unknown user with exit 1', async () => {
      const tokens = await count('select count(*) as n from access_tokens');
      const run = await cli('tokens', 'create', '--user', 'user_doesnotexist', '--expires-in', '60');
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/not_found/);
      expect(await count('select count(*) as n from access_tokens')).toBe(tokens);
    });

    it('treats a bad --expires-in or a missing --user as a usage error', async () => {
      const user = await newUser('badexpiry@example.com');
      const tokens = await count('select count(*) as n from access_tokens');
      const refused = [
        ['--user', user.user_id, '--expires-in', '0'],
        ['--user', user.user_id, '--expires-in', 'abc'],
        ['--user', user.user_id, '--expires-in', '1.5'],
        ['--user', user.user_id, '--expires-in=-10'],
        ['--user', user.user_id, '--expires-in', '-10'],
        ['--user', user.user_id, '--expires-in', ''],
        ['--expires-in', '60'],
      ];
      const runs = await Promise.all(refused.map((args) => cli('tokens', 'create', ...args)));
      for (const [i, run] of runs.entries()) {
        expect(run.code, `${refused[i].join(' ')}: ${run.stderr}`).toBe(EX_USAGE);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/usage/);
      }
      expect(await count('select count(*) as n from access_tokens')).toBe(tokens);
    });

    it('revokes a token: it gets 401 while another token of the same user still works', async () => {
      const user = await newUser('revoker@example.com');
      const second = jsonLine(await cli('tokens', 'create', '--user', user.user_id));
      expect((await rest(app, 'GET', '/files/list', { token: second.token, query: { page: 1, size: 1 } })).status).toBe(200);

      const revoked = jsonLine(await cli('tokens', 'revoke', second.token_id));
      expect(Object.keys(revoked).sort()).toEqual(['revoked_at', 'token_id']);
      expect(revoked.token_id).toBe(second.token_id);
      expect(new Date(revoked.revoked_at).toISOString()).toBe(revoked.revoked_at);

      const refused = await rest(app, 'GET', '/files/list', { token: second.token, query: { page: 1, size: 1 } });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ data: null, status_code: 401, message: 'unauthorized', success: false });
      expect((await gql(app, second.token, MeDocument)).errors?.[0]?.extensions?.code).toBe('unauthorized');
      expect((await rest(app, 'GET', '/files/list', { token: user.token, query: { page: 1, size: 1 } })).status).toBe(200);
      expect((await gql(app, user.token, MeDocument)).data?.me?.token_id).toBe(user.token_id);

      // Revoking again changes nothing: same answer, same time.
      expect(jsonLine(await cli('tokens', 'revoke', second.token_id))).toEqual(revoked);
    });

    it('refuses to revoke an unknown token (exit 1) and wants a token id (exit 64)', async () => {
      const unknown = await cli('tokens', 'revoke', 'tok_doesnotexist');
      expect(unknown.code).toBe(1);
      expect(unknown.stdout).toBe('');
      expect(unknown.stderr).toMatch(/not_found/);

      const missing = await cli('tokens', 'revoke');
      expect(missing.code).toBe(EX_USAGE);
      expect(missing.stdout).toBe('');
      expect(missing.stderr).toMatch(/usage/);
    });
  });

  describe('wallet credit', () => {
    const ledger = (userId: string) =>
      db
        .query<{ kind: string; amount_paise: string; balance_after_paise: string; id: string }>(
          'select id, kind, amount_paise, balance_after_paise from wallet_entries where user_id = $1 order by balance_after_paise',
          [userId],
        )
        .then((result) => result.rows);
    const balance = async (userId: string) =>
      (await db.query<{ balance_paise: string }>('select balance_paise from wallets where user_id = $1', [userId])).rows.map(
        (row) => row.balance_paise,
      );

    it('credits rupees to the wallet and keeps the ledger', async () => {
      const user = await newUser('wallet@example.com');
      const first = jsonLine(await cli('wallet', 'credit', '--user', user.user_id, '--amount', '2500'));
      expect(first).toEqual({
        entry_id: expect.stringMatching(/^wle_/),
        user_id: user.user_id,
        amount: '2500.00',
        balance: '2500.00',
      });
      const second = jsonLine(await cli('wallet', 'credit', '--user', user.user_id, '--amount', '99.50'));
      expect(second).toEqual({
        entry_id: expect.stringMatching(/^wle_/),
        user_id: user.user_id,
        amount: '99.50',
        balance: '2599.50',
      });

      expect(await balance(user.user_id)).toEqual(['259950']);
      expect(await ledger(user.user_id)).toEqual([
        { id: first.entry_id, kind: 'credit', amount_paise: '250000', balance_after_paise: '250000' },
        { id: second.entry_id, kind: 'credit', amount_paise: '9950', balance_after_paise: '259950' },
      ]);
    });

    it('refuses amounts that are not positive rupees with at most two decimals (exit 64, no ledger row)', async () => {
      const user = await newUser('refused-amounts@example.com');
      jsonLine(await cli('wallet', 'credit', '--user', user.user_id, '--amount', '1'));
      const entries = await count('select count(*) as n from wallet_entries');
      const refused = [['0'], ['-5'], ['--amount=-5'], ['1.005'], ['abc'], ['0.00'], ['1e3'], ['']].map((amount) =>
        amount[0].startsWith('--') ? amount : ['--amount', amount[0]],
      );
      const runs = await Promise.all(refused.map((args) => cli('wallet', 'credit', '--user', user.user_id, ...args)));
      for (const [i, run] of runs.entries()) {
        expect(run.code, `${refused[i].join(' ')}: ${run.stderr}`).toBe(EX_USAGE);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/usage/);
      }
      const missing = await cli('wallet', 'credit', '--user', user.user_id);
      expect(missing.code).toBe(EX_USAGE);
      expect(await count('select count(*) as n from wallet_entries')).toBe(entries);
      expect(await balance(user.user_id)).toEqual(['100']);
    });

    it('refuses an unknown user with exit 1 and makes no wallet', async () => {
      const entries = await count('select count(*) as n from wallet_entries');
      const run = await cli('wallet', 'credit', '--user', 'user_nobody', '--amount', '10');
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/not_found/);
      expect(await count('select count(*) as n from wallets where user_id = $1', ['user_nobody'])).toBe(0);
      expect(await count('select count(*) as n from wallet_entries')).toBe(entries);
    });

    it('adds up concurrent credits exactly, one ledger row each', { timeout: 180_000 }, async () => {
      const user = await newUser('concurrent@example.com');
      // A wallet that does not exist yet: the first credits race to create it.
      const runs = await Promise.all(
        Array.from({ length: 10 }, () => cli('wallet', 'credit', '--user', user.user_id, '--amount', '10')),
      );
      const results = runs.map((run) => jsonLine(run));
      expect(new Set(results.map((result) => result.entry_id)).size).toBe(10);
      expect(results.map((result) => result.balance).sort((a, b) => Number(a) - Number(b))).toEqual(
        Array.from({ length: 10 }, (_, i) => `${(i + 1) * 10}.00`),
      );

      expect(await balance(user.user_id)).toEqual(['10000']);
      const rows = await ledger(user.user_id);
      expect(rows).toHaveLength(10);
      expect(rows.every((row) => row.kind === 'credit' && row.amount_paise === '1000')).toBe(true);
      expect(new Set(rows.map((row) => row.balance_after_paise)).size).toBe(10);
      expect(rows.map((row) => row.balance_after_paise)).toEqual(Array.from({ length: 10 }, (_, i) => String((i + 1) * 1000)));

      // And again on the wallet that now exists.
      const more = await Promise.all(
        Array.from({ length: 10 }, () => cli('wallet', 'credit', '--user', user.user_id, '--amount', '10')),
      );
      for (const run of more) jsonLine(run);
      expect(await balance(user.user_id)).toEqual(['20000']);
      const all = await ledger(user.user_id);
      expect(all).toHaveLength(20);
      expect(new Set(all.map((row) => row.balance_after_paise)).size).toBe(20);
    });
  });

  describe('usage', () => {
    it.each([
      ['no command', []],
      ['an unknown command', ['frobnicate']],
      ['an unknown subcommand', ['users', 'delete']],
      ['half a command', ['wallet']],
      ['an unknown option', ['users', 'create', '--email', 'x@example.com', '--admin']],
    ])('answers %s with exit 64 and the usage on stderr', async (_label, args) => {
      const run = await cli(...args);
      expect(run.code).toBe(EX_USAGE);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^usage: npm run cli -- <command>$/m);
      expect(run.stderr).toMatch(/wallet credit --user USER_ID --amount RUPEES/);
    });

    it('prints the usage for --help with exit 0', async () => {
      const run = await cli('--help');
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^usage:/);
    });
  });

  describe('npm run cli: the launcher (scripts/run-built.mjs)', () => {
    const COMPILING = /^Compiling \(the sources changed since the last build\)/m;
    let project: string;
    const launch = (...args: string[]) =>
      run(process.execPath, ['scripts/run-built.mjs', 'src/cli/index.ts', '--', ...args], { cwd: project });
    const writeEntry = (source: string) => writeFileSync(path.join(project, 'src/cli/index.ts'), source);
    const entry = (version: number) =>
      `const args = process.argv.slice(2);\nconsole.log(JSON.stringify({ args, version: ${version} }));\nprocess.exitCode = args.includes('fail') ? 3 : 0;\n`;

    // A project of its own with the repository's launcher and tsconfig.json and a one-line entry: what the launcher
    // does is seen without rebuilding (or touching) the service's own dist/.
    beforeAll(() => {
      project = mkdtempSync(path.join(os.tmpdir(), 'run-built-'));
      mkdirSync(path.join(project, 'scripts'));
      mkdirSync(path.join(project, 'src/cli'), { recursive: true });
      copyFileSync(path.join(ROOT, 'scripts/run-built.mjs'), path.join(project, 'scripts/run-built.mjs'));
      copyFileSync(path.join(ROOT, 'tsconfig.json'), path.join(project, 'tsconfig.json'));
      writeFileSync(path.join(project, 'package.json'), '{"private": true}\n');
      symlinkSync(realpathSync(path.join(ROOT, 'node_modules')), path.join(project, 'node_modules'));
      writeEntry(entry(1));
    });
    afterAll(() => rmSync(project, { recursive: true, force: true }));

    it(
      'compiles a fresh checkout once, then runs the built code without compiling until a source changes',
      { timeout: 120_000 },
      async () => {
        const first = await launch('wallet', 'credit');
        expect(first.code, first.stderr).toBe(0);
        expect(first.stderr).toMatch(COMPILING);
        expect(JSON.parse(first.stdout)).toEqual({ args: ['wallet', 'credit'], version: 1 });
        expect(existsSync(path.join(project, 'dist/src/cli/index.js'))).toBe(true);

        const current = await launch('--amount', '5');
        expect(current.code, current.stderr).toBe(0);
        expect(current.stderr).not.toMatch(COMPILING);
        expect(JSON.parse(current.stdout)).toEqual({ args: ['--amount', '5'], version: 1 });

        writeEntry(entry(2));
        const changed = await launch();
        expect(changed.stderr).toMatch(COMPILING);
        expect(JSON.parse(changed.stdout)).toEqual({ args: [], version: 2 });
        expect((await launch()).stderr).not.toMatch(COMPILING);
      },
    );

    it('passes the exit code on, and a source that does not compile stops it until fixed', { timeout: 120_000 }, async () => {
      const failing = await launch('fail');
      expect(failing.code).toBe(3);

      writeEntry('const broken: number = "text";\n');
      const broken = await launch();
      expect(broken.code).not.toBe(0);
      expect(broken.stderr).toMatch(/error TS2322/);
      expect(broken.stdout).toBe('');
      // Still stale: the next call compiles again rather than running what tsc emitted.
      expect((await launch()).stderr).toMatch(/error TS2322/);

      writeEntry(entry(3));
      const fixed = await launch('ok');
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(JSON.parse(fixed.stdout)).toEqual({ args: ['ok'], version: 3 });
    });

    it('`npm run -s cli -- --help` runs the service’s CLI', { timeout: 120_000 }, async () => {
      const help = await run('npm', ['run', '-s', 'cli', '--', '--help'], { cwd: ROOT });
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toBe('');
      expect(help.stderr).toMatch(/^usage: npm run cli -- <command>$/m);
    });
  });
});
