import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');

it('the build deletes compiled output whose source is gone, and keeps the rest', async () => {
  // A file as tsc would have left it after its source moved away (as src/config.ts did to src/config/index.ts).
  const stale = path.join(ROOT, 'dist/src/platform/zz-moved-away.js');
  const kept = path.join(ROOT, 'dist/src/modules.js');
  mkdirSync(path.dirname(stale), { recursive: true });
  writeFileSync(stale, 'module.exports = {};\n');
  writeFileSync(`${stale}.map`, '{}\n');
  await promisify(execFile)(process.execPath, [path.join(ROOT, 'scripts/prune-dist.mjs')]);
  expect(existsSync(stale)).toBe(false);
  expect(existsSync(`${stale}.map`)).toBe(false);
  expect(existsSync(kept)).toBe(true); // `npm test` builds before vitest runs
});
