// Runs a compiled entry point (`node scripts/run-built.mjs src/cli/index.ts -- args...`), compiling the project
// first only when dist/ is missing or older than the sources. A no-change `tsc` still loads and checks the whole
// program (6 s on a quiet machine, over 20 s on a loaded one), so the CLI used to pay that on every call.
//
// Stale: dist/.tsbuildinfo (tsconfig.json's tsBuildInfoFile) is missing, the entry's output is missing, or a file
// tsc reads (src/**, mikro-orm.config.ts, tsconfig.json, package.json, package-lock.json) changed after it.
// tsc leaves .tsbuildinfo alone when nothing needs emitting (a file touched but not changed), so after a build
// this script sets its time to when the build started: an edit made during the build still counts as newer.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD_INFO = path.join(ROOT, 'dist', '.tsbuildinfo');
const INPUTS = ['src', 'mikro-orm.config.ts', 'tsconfig.json', 'package.json', 'package-lock.json'];

/** The newest modification time (ms) under `target`, or 0 when it does not exist. */
function newest(target) {
  let stats;
  try {
    stats = statSync(target);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) return stats.mtimeMs;
  let latest = stats.mtimeMs; // a deleted or renamed file changes its directory's time
  for (const entry of readdirSync(target)) latest = Math.max(latest, newest(path.join(target, entry)));
  return latest;
}

function isStale(output) {
  if (!existsSync(BUILD_INFO) || !existsSync(output)) return true;
  const built = statSync(BUILD_INFO).mtimeMs;
  return INPUTS.some((input) => newest(path.join(ROOT, input)) > built);
}

const [entry, ...rest] = process.argv.slice(2);
if (!entry || !/^src\/.+\.ts$/.test(entry)) {
  process.stderr.write('usage: node scripts/run-built.mjs src/<entry>.ts [--] [args...]\n');
  process.exit(64);
}
const args = rest[0] === '--' ? rest.slice(1) : rest;
const output = path.join(ROOT, 'dist', entry.replace(/\.ts$/, '.js'));

if (isStale(output)) {
  const started = new Date();
  process.stderr.write('Compiling (the sources changed since the last build)…\n');
  spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'prune-dist.mjs')], { stdio: 'inherit' });
  const tsc = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
    cwd: ROOT,
    stdio: ['ignore', 2, 'inherit'], // tsc's diagnostics go to stderr: stdout stays the command's own
  });
  if (tsc.status !== 0) {
    // tsc wrote its output and .tsbuildinfo all the same: mark them stale, so the next call compiles (and says why) again.
    if (existsSync(BUILD_INFO)) utimesSync(BUILD_INFO, new Date(0), new Date(0));
    process.exit(tsc.status ?? 1);
  }
  if (existsSync(BUILD_INFO)) utimesSync(BUILD_INFO, started, started);
}

// The entry reads its arguments from process.argv, as when started with `node dist/...js args`.
process.argv = [process.argv[0], output, ...args];
await import(pathToFileURL(output).href);
