// Deletes compiled output whose source is gone, in dist/ and dist-bench/ (`npm run build` and `npm run bench` run it
// before tsc, and so does scripts/run-built.mjs). tsc never removes what it emitted for a file since moved or deleted, and such a file can
// shadow the new one: after src/config.ts became src/config/index.ts, a stale dist/src/config.js was still what
// `require('./config')` loaded.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Every emitted .js (and its .js.map) under `dir` whose .ts source (the same path under the root) is missing. */
function prune(out, dir = out) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const output = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(out, output);
      continue;
    }
    const match = /^(.*)\.js(\.map)?$/.exec(entry.name);
    if (!match) continue;
    const source = path.join(ROOT, path.relative(out, dir), `${match[1]}.ts`);
    if (!existsSync(source)) rmSync(output);
  }
}

for (const out of ['dist', 'dist-bench']) prune(path.join(ROOT, out));
