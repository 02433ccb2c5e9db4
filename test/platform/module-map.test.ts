import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../helpers/source-files';
import { DEVELOPMENT_DOC, readModuleMap, withModuleMap } from '../../src/cli/emit-module-map';

/**
 * The module map (src/module-map.json) is the one list of the arrows allowed between modules: the lint enforces it,
 * docs/development.md shows it, and it names exactly the arrows the code has.
 */
const ROOT = path.resolve(__dirname, '../..');
const MODULES = path.join(ROOT, 'src/modules');

/** Every module another module's code imports (static, dynamic and re-exports), by the importing module. */
function arrowsInCode(): Record<string, Set<string>> {
  const arrows: Record<string, Set<string>> = {};
  for (const file of sourceFiles(MODULES)) {
    const from = path.relative(MODULES, file).split(path.sep)[0];
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.\.?\/[^']+)'/g)) {
      const target = path.relative(MODULES, path.resolve(path.dirname(file), match[1])).split(path.sep);
      if (target[0] !== '..' && target[0] !== from) (arrows[from] ??= new Set()).add(target[0]);
    }
  }
  return arrows;
}

describe('the module map', () => {
  const map = readModuleMap();

  it('is what docs/development.md shows', () => {
    const doc = readFileSync(DEVELOPMENT_DOC, 'utf8');
    expect(doc, 'run `npm run docs:map`').toBe(withModuleMap(doc, map));
  });

  it('lists every module folder, and only those', () => {
    const folders = readdirSync(MODULES, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    expect(Object.keys(map).sort()).toEqual(folders.map((folder) => folder.name).sort());
  });

  it('allows exactly the arrows the code has', () => {
    const code = arrowsInCode();
    for (const [module, uses] of Object.entries(map)) {
      expect([...(code[module] ?? [])].sort(), `what ${module} imports`).toEqual([...uses].sort());
    }
  });

  it('fails the lint on an arrow it lacks', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'module-map-'));
    try {
      cpSync(path.join(ROOT, '.dependency-cruiser.cjs'), path.join(dir, '.dependency-cruiser.cjs'));
      writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs' } }));
      mkdirSync(path.join(dir, 'src/modules/alpha'), { recursive: true });
      mkdirSync(path.join(dir, 'src/modules/beta'), { recursive: true });
      writeFileSync(path.join(dir, 'src/module-map.json'), JSON.stringify({ alpha: [], beta: [] }));
      writeFileSync(
        path.join(dir, 'src/modules/alpha/index.ts'),
        "import { beta } from '../beta';\nexport const alpha = beta;\n",
      );
      writeFileSync(path.join(dir, 'src/modules/beta/index.ts'), 'export const beta = 1;\n');
      const depcruise = path.join(ROOT, 'node_modules/.bin/depcruise');
      const run = promisify(execFile)(depcruise, ['src', '--config', '.dependency-cruiser.cjs'], { cwd: dir });
      const failure = await run.then(
        () => null,
        (error: { code: number; stdout: string }) => error,
      );
      expect(failure?.code).toBeGreaterThan(0);
      expect(failure?.stdout).toContain('module-map/alpha: src/modules/alpha/index.ts → src/modules/beta/index.ts');

      writeFileSync(path.join(dir, 'src/module-map.json'), JSON.stringify({ alpha: ['beta'], beta: [] }));
      await expect(
        promisify(execFile)(depcruise, ['src', '--config', '.dependency-cruiser.cjs'], { cwd: dir }),
      ).resolves.toBeTruthy();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
