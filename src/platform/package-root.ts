import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The package's root: the first directory above `from` (a module's `__dirname`, in src/ or dist/) holding a
 * package.json. tsc copies no assets into dist/, so pages and fonts are read from the source tree found from here.
 */
export function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
