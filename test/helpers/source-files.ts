import { readdirSync } from 'node:fs';
import path from 'node:path';

/** Every script under `dir` (TypeScript and the page's JavaScript), as absolute paths, in any depth. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|js|mjs)$/.test(entry.name) ? [full] : [];
  });
}
